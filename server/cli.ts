// `humantask <command>`: the operator's and developer's entry point.
import { startMock } from '../scripts/mock.ts';

const usage = `usage: humantask <command>

commands:
  mock    Prism mocks of both generations on loopback (MOCK_PORT_CURRENT=4010, MOCK_PORT_LEGACY=4011)
`;

const [command] = process.argv.slice(2);
switch (command) {
  case 'mock': {
    const mock = await startMock({
      current: Number(process.env.MOCK_PORT_CURRENT ?? 4010),
      legacy: Number(process.env.MOCK_PORT_LEGACY ?? 4011),
    }, process.env.MOCK_HOST ?? '127.0.0.1');
    console.log(`current generation mock: ${mock.urls.current}/v1/...`);
    console.log(`legacy generation mock:  ${mock.urls.legacy}/v1/...`);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => void mock.stop().then(() => process.exit(0)));
    }
    break;
  }
  default:
    process.stdout.write(usage);
    process.exit(command === undefined || command === 'help' ? 0 : 2);
}
