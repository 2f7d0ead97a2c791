// The connections of a test process's fetches (undici's Agent, set as the global dispatcher that
// Node's fetch uses). With kept-alive connections, a request can be written to a socket in the very
// moment the server closes it for being idle (its keep-alive timeout, 5 s): the request then fails
// with "other side closed" or ECONNRESET although the server never saw it, a known race of HTTP/1.1
// keep-alive that a loaded machine makes likely. A test must fail only for what the server did. So
// the client drops a connection once it has been idle 10 ms, long before any server would: a
// request goes out on a connection that was busy a moment ago, or on a new one.
//
// Not `pipelining: 0` (no connection kept at all): the server then ends each connection after its
// answer, and undici 7 throws an uncatchable AssertionError (`assert(!this.paused)`) when that end
// arrives while a large body waits unread (nodejs/undici#5360, fixed in undici 8 only, which needs
// Node 22).
import { Agent, setGlobalDispatcher } from 'undici';

setGlobalDispatcher(new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10 }));
