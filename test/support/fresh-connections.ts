// Every fetch of a test process opens a fresh connection (undici's Agent with `pipelining: 0`, set as
// the global dispatcher that Node's fetch uses). With kept-alive connections, a request can be
// written to a socket in the very moment the server closes it for being idle (its keep-alive
// timeout): the request then fails with "other side closed" or ECONNRESET although the server
// never saw it, a known race of HTTP/1.1 keep-alive that a loaded machine makes likely. A test
// must fail only for what the server did. Loopback connections cost next to nothing.
import { Agent, setGlobalDispatcher } from 'undici';

setGlobalDispatcher(new Agent({ pipelining: 0 }));
