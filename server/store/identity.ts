// The repositories of customer identity (issue 34): members, sessions, links, log-in rules and SSO
// settings, SSO log-ins, scoped API keys and the activity log. TOTP seeds, the OIDC client secret and
// PKCE verifiers are sealed here on the way in and opened on the way out (secrets.ts).
import { and, asc, count, desc, eq, gt, gte, isNull, like, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { ActivityEntry, ActivityRepository } from '../domain/identity/activity.ts';
import {
  MemberEmailTaken,
  type AccountIdentityRecord,
  type AccountIdentityRepository,
  type ApiKeyRecord,
  type ApiKeyRepository,
  type MemberLinkRepository,
  type MemberRecord,
  type MemberRepository,
  type MemberSessionRepository,
  type SsoLoginRepository,
} from '../domain/identity/model.ts';
import type { Role, Scope } from '../domain/identity/roles.ts';
import type { Database } from './db.ts';
import { isUniqueViolation } from './errors.ts';
import { accountIdentity, activity, apiKeys, memberLinks, members, memberSessions, ssoLogins } from './schema.ts';
import type { SecretBox } from './secrets.ts';

type MemberRow = typeof members.$inferSelect;
type IdentityRow = typeof accountIdentity.$inferSelect;

export function identityRepositories(db: Database, secrets: SecretBox) {
  const seal = (v: string | null) => (v === null ? null : secrets.seal(v));
  const open = (v: string | null) => (v === null ? null : secrets.open(v));
  const memberOut = (r: MemberRow): MemberRecord => ({
    ...r,
    role: r.role as Role,
    totpSecret: open(r.totpSecret),
    totpPending: open(r.totpPending),
  });
  const memberIn = (m: MemberRecord): MemberRow => ({ ...m, totpSecret: seal(m.totpSecret), totpPending: seal(m.totpPending) });
  const identityOut = (accountId: string, r: IdentityRow | undefined): AccountIdentityRecord => ({
    accountId,
    requireTotp: r?.requireTotp ?? false,
    passwordLogin: r?.passwordLogin ?? true,
    sso:
      r?.ssoIssuer && r.ssoClientId
        ? {
            issuer: r.ssoIssuer,
            clientId: r.ssoClientId,
            clientSecret: open(r.ssoClientSecret),
            allowedDomains: r.ssoAllowedDomains ?? [],
            defaultRole: (r.ssoDefaultRole ?? 'viewer') as Role,
            enabled: r.ssoEnabled,
            updatedAt: r.ssoUpdatedAt ?? new Date(0),
          }
        : null,
    testKeyUsedAt: r?.testKeyUsedAt ?? null,
    liveKeyUsedAt: r?.liveKeyUsedAt ?? null,
  });
  const keyOut = (r: typeof apiKeys.$inferSelect): ApiKeyRecord => ({
    ...r,
    scopes: r.scopes as Scope[],
    createdBy: (r.createdBy as ApiKeyRecord['createdBy']) ?? null,
  });
  const liveKey = (now: Date) => and(isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)));

  const membersRepo: MemberRepository = {
    async insert(member) {
      try {
        await db.insert(members).values(memberIn(member));
      } catch (err) {
        if (isUniqueViolation(err, 'members_email_live')) throw new MemberEmailTaken();
        throw err;
      }
    },
    async update(member) {
      const { memberId, ...rest } = memberIn(member);
      try {
        await db.update(members).set(rest).where(eq(members.memberId, memberId));
      } catch (err) {
        if (isUniqueViolation(err, 'members_email_live')) throw new MemberEmailTaken();
        throw err;
      }
    },
    async get(accountId, memberId, options) {
      const q = db
        .select()
        .from(members)
        .where(and(eq(members.accountId, accountId), eq(members.memberId, memberId)));
      const [row] = options?.forUpdate ? await q.for('update') : await q;
      return row ? memberOut(row) : null;
    },
    async findByEmail(accountId, email) {
      const [row] = await db
        .select()
        .from(members)
        .where(and(eq(members.accountId, accountId), sql`lower(${members.email}) = lower(${email})`, sql`${members.status} <> 'removed'`));
      return row ? memberOut(row) : null;
    },
    async findBySsoSubject(accountId, subject) {
      const [row] = await db
        .select()
        .from(members)
        .where(and(eq(members.accountId, accountId), eq(members.ssoSubject, subject)));
      return row ? memberOut(row) : null;
    },
    async list(accountId, status) {
      const rows = await db
        .select()
        .from(members)
        .where(and(eq(members.accountId, accountId), status ? eq(members.status, status) : sql`${members.status} <> 'removed'`))
        .orderBy(asc(members.createdAt), asc(members.memberId));
      return rows.map(memberOut);
    },
    async activeOwners(accountId) {
      const rows = await db
        .select()
        .from(members)
        .where(and(eq(members.accountId, accountId), eq(members.role, 'owner'), eq(members.status, 'active')))
        .for('update');
      return rows.map(memberOut);
    },
    async countNotRemoved(accountId) {
      const [row] = await db
        .select({ n: count() })
        .from(members)
        .where(and(eq(members.accountId, accountId), sql`${members.status} <> 'removed'`));
      return Number(row?.n ?? 0);
    },
  };

  const sessionsRepo: MemberSessionRepository = {
    async insert(session) {
      await db.insert(memberSessions).values(session);
    },
    async findByTokenHash(tokenHash) {
      const [row] = await db
        .select({ session: memberSessions, member: members })
        .from(memberSessions)
        .innerJoin(members, eq(members.memberId, memberSessions.memberId))
        .where(eq(memberSessions.tokenHash, tokenHash));
      return row ? { session: row.session, member: memberOut(row.member) } : null;
    },
    async touch(sessionId, usedAt, expiresAt) {
      await db.update(memberSessions).set({ lastUsedAt: usedAt, expiresAt }).where(eq(memberSessions.sessionId, sessionId));
    },
    async live(memberId, now) {
      return db
        .select()
        .from(memberSessions)
        .where(
          and(
            eq(memberSessions.memberId, memberId),
            isNull(memberSessions.endedAt),
            gt(memberSessions.expiresAt, now),
            gt(memberSessions.absoluteExpiresAt, now),
          ),
        )
        .orderBy(desc(memberSessions.createdAt), desc(memberSessions.sessionId));
    },
    async end(memberId, sessionId, now) {
      const rows = await db
        .update(memberSessions)
        .set({ endedAt: now })
        .where(and(eq(memberSessions.memberId, memberId), eq(memberSessions.sessionId, sessionId), isNull(memberSessions.endedAt)))
        .returning({ id: memberSessions.sessionId });
      return rows.length === 1;
    },
    async endAll(memberId, now, except) {
      const rows = await db
        .update(memberSessions)
        .set({ endedAt: now })
        .where(
          and(
            eq(memberSessions.memberId, memberId),
            isNull(memberSessions.endedAt),
            gt(memberSessions.absoluteExpiresAt, now),
            except ? sql`${memberSessions.sessionId} <> ${except}` : undefined,
          ),
        )
        .returning({ id: memberSessions.sessionId });
      return rows.length;
    },
  };

  const linksRepo: MemberLinkRepository = {
    async insert(link) {
      await db.insert(memberLinks).values(link);
    },
    async get(linkId, options) {
      const q = db.select().from(memberLinks).where(eq(memberLinks.linkId, linkId));
      const [row] = options?.forUpdate ? await q.for('update') : await q;
      return row ?? null;
    },
    async markUsed(linkId, at) {
      await db.update(memberLinks).set({ usedAt: at }).where(eq(memberLinks.linkId, linkId));
    },
    async voidFor(memberId, at, purpose) {
      await db
        .update(memberLinks)
        .set({ voidedAt: at })
        .where(
          and(
            eq(memberLinks.memberId, memberId),
            isNull(memberLinks.usedAt),
            isNull(memberLinks.voidedAt),
            purpose ? eq(memberLinks.purpose, purpose) : undefined,
          ),
        );
    },
    token(link) {
      const signed = [link.linkId, link.accountId, link.memberId, link.purpose, link.expiresAt.toISOString()].join('\n');
      // Signed with a key derived from the secrets key for this use only (secrets.ts).
      return `htl_${link.linkId}.${secrets.sign('member links', signed)}`;
    },
  };

  const identityRepo: AccountIdentityRepository = {
    async get(accountId) {
      const [row] = await db.select().from(accountIdentity).where(eq(accountIdentity.accountId, accountId));
      return identityOut(accountId, row);
    },
    async put(record) {
      const row = {
        accountId: record.accountId,
        requireTotp: record.requireTotp,
        passwordLogin: record.passwordLogin,
        ssoIssuer: record.sso?.issuer ?? null,
        ssoClientId: record.sso?.clientId ?? null,
        ssoClientSecret: seal(record.sso?.clientSecret ?? null),
        ssoAllowedDomains: record.sso?.allowedDomains ?? null,
        ssoDefaultRole: record.sso?.defaultRole ?? null,
        ssoEnabled: record.sso?.enabled ?? false,
        ssoUpdatedAt: record.sso?.updatedAt ?? null,
      };
      const { accountId: _id, ...set } = row;
      await db.insert(accountIdentity).values(row).onConflictDoUpdate({ target: accountIdentity.accountId, set });
    },
    async touchLegacyKey(accountId, mode, at) {
      const column = mode === 'test' ? { testKeyUsedAt: at } : { liveKeyUsedAt: at };
      await db
        .insert(accountIdentity)
        .values({ accountId, ...column })
        .onConflictDoUpdate({ target: accountIdentity.accountId, set: column });
    },
  };

  const ssoRepo: SsoLoginRepository = {
    async insert(login) {
      await db.insert(ssoLogins).values({ ...login, codeVerifier: secrets.seal(login.codeVerifier) });
    },
    async get(loginId, options) {
      const q = db.select().from(ssoLogins).where(eq(ssoLogins.loginId, loginId));
      const [row] = options?.forUpdate ? await q.for('update') : await q;
      return row ? { ...row, codeVerifier: secrets.open(row.codeVerifier) } : null;
    },
    async markUsed(loginId, at) {
      await db.update(ssoLogins).set({ usedAt: at }).where(eq(ssoLogins.loginId, loginId));
    },
    async deleteBefore(before) {
      const rows = await db.delete(ssoLogins).where(lt(ssoLogins.expiresAt, before)).returning({ id: ssoLogins.loginId });
      return rows.length;
    },
  };

  const keysRepo: ApiKeyRepository = {
    async insert(k) {
      await db.insert(apiKeys).values(k);
    },
    async get(accountId, keyId) {
      const [row] = await db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.accountId, accountId), eq(apiKeys.keyId, keyId)));
      return row ? keyOut(row) : null;
    },
    async list(accountId, { all, now }) {
      const rows = await db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.accountId, accountId), all ? undefined : liveKey(now)))
        .orderBy(desc(apiKeys.createdAt), desc(apiKeys.keyId));
      return rows.map(keyOut);
    },
    async countLive(accountId, now) {
      const [row] = await db
        .select({ n: count() })
        .from(apiKeys)
        .where(and(eq(apiKeys.accountId, accountId), liveKey(now)));
      return Number(row?.n ?? 0);
    },
    async revoke(accountId, keyId, at) {
      await db
        .update(apiKeys)
        .set({ revokedAt: at })
        .where(and(eq(apiKeys.accountId, accountId), eq(apiKeys.keyId, keyId), isNull(apiKeys.revokedAt)));
    },
    async touch(keyId, at) {
      await db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.keyId, keyId));
    },
  };

  const activityRepo: ActivityRepository = {
    async append(e) {
      const { actor, ...rest } = e;
      await db.insert(activity).values({ ...rest, actorType: actor.type, actorId: actor.id ?? null, actorName: actor.name ?? null });
    },
    async list(accountId, f, page) {
      const where: (SQL | undefined)[] = [eq(activity.accountId, accountId)];
      if (f.action) where.push(eq(activity.action, f.action));
      if (f.actionPrefix) where.push(like(activity.action, `${f.actionPrefix.replace(/[\\%_]/g, '\\$&')}.%`));
      if (f.actorType) where.push(eq(activity.actorType, f.actorType));
      if (f.actorId) where.push(eq(activity.actorId, f.actorId));
      if (f.targetType) where.push(eq(activity.targetType, f.targetType));
      if (f.targetId) where.push(eq(activity.targetId, f.targetId));
      if (f.since) where.push(gte(activity.at, f.since));
      if (f.until) where.push(lte(activity.at, f.until));
      if (page.after)
        where.push(or(lt(activity.at, page.after.at), and(eq(activity.at, page.after.at), lt(activity.activityId, page.after.activityId))));
      const rows = await db
        .select()
        .from(activity)
        .where(and(...where))
        .orderBy(desc(activity.at), desc(activity.activityId))
        .limit(page.limit);
      return rows.map(
        ({ actorType, actorId, actorName, ...r }): ActivityEntry => ({
          ...r,
          actor: {
            type: actorType as ActivityEntry['actor']['type'],
            ...(actorId ? { id: actorId } : {}),
            ...(actorName ? { name: actorName } : {}),
          },
          mode: r.mode ?? null,
          details: r.details ?? null,
        }),
      );
    },
    async deleteBefore(before) {
      const rows = await db.delete(activity).where(lt(activity.at, before)).returning({ id: activity.activityId });
      return rows.length;
    },
  };

  return {
    members: membersRepo,
    memberSessions: sessionsRepo,
    memberLinks: linksRepo,
    accountIdentity: identityRepo,
    ssoLogins: ssoRepo,
    apiKeys: keysRepo,
    activity: activityRepo,
  };
}
