// An export's download link: `/v1/exports/{exportId}/download?expires=<unix seconds>&signature=...`,
// an HMAC of the id and the expiry under the server's key (store/secrets.ts `sign`), so that a tool
// without an API key (a training job) can fetch the file until then, and no one can make a link
// or lengthen one. Served before the API's authentication (server/main.ts mounts it).
import { timingSafeEqual } from 'node:crypto';
import express, { type Router } from 'express';
import type { ExportRecord, UnitOfWork } from '../domain/ports.ts';
import { exportFileName } from './exports.ts';

const purpose = 'export download';

export interface LinkSigner {
  sign(purpose: string, message: string): string;
  exportLinkMs: number;
}

/** The link to a completed export's file, valid for EXPORT_LINK_SECONDS (no longer than the file is kept); null before. */
export function downloadLink(signer: LinkSigner, r: ExportRecord, origin: string | undefined, now = new Date()) {
  if (r.state !== 'completed' || r.expiresAt === null) return null;
  const expires = Math.floor(Math.min(now.getTime() + signer.exportLinkMs, r.expiresAt.getTime()) / 1000);
  const signature = signer.sign(purpose, `${r.exportId}\n${expires}`);
  return {
    url: `${origin ?? ''}/v1/exports/${encodeURIComponent(r.exportId)}/download?expires=${expires}&signature=${signature}`,
    expiresAt: new Date(expires * 1000),
    fileName: exportFileName(r),
  };
}

const refuse = (res: express.Response, status: number, error: string) => res.status(status).json({ status_code: status, error });

/** GET /v1/exports/{exportId}/download: the file, if the link's signature holds and its time has not passed. */
export function downloadRouter(uow: UnitOfWork, signer: LinkSigner, now: () => Date = () => new Date()): Router {
  const router = express.Router();
  router.get('/v1/exports/:exportId/download', async (req, res, next) => {
    try {
      const { exportId } = req.params;
      const expires = Number(req.query.expires);
      const signature = typeof req.query.signature === 'string' ? req.query.signature : '';
      const expected = Buffer.from(signer.sign(purpose, `${exportId}\n${expires}`));
      const given = Buffer.from(signature);
      if (!Number.isSafeInteger(expires) || given.length !== expected.length || !timingSafeEqual(given, expected))
        return refuse(res, 403, 'This download link is not valid (its signature does not match).');
      if (expires * 1000 <= now().getTime())
        return refuse(res, 403, 'This download link has expired; read the export again (GET /v1/exports/{exportId}) for a new one.');
      const record = await uow.transfer.findExport(exportId);
      if (record?.state !== 'completed') return refuse(res, 404, `Export ${exportId} has no file (it expired, or was never written).`);
      res.status(200);
      res.set({
        'content-type': 'application/gzip',
        'content-disposition': `attachment; filename="${exportFileName(record)}"`,
        ...(record.sizeBytes !== null ? { 'content-length': String(record.sizeBytes) } : {}),
      });
      for (let seq = 0; ; ) {
        const pieces = await uow.transfer.exportChunks(exportId, seq, 4);
        for (const p of pieces) if (!res.write(p.data)) await new Promise((resolve) => res.once('drain', resolve));
        if (pieces.length < 4) break;
        seq = pieces.at(-1)!.seq + 1;
      }
      res.end();
    } catch (err) {
      next(err);
    }
  });
  return router;
}
