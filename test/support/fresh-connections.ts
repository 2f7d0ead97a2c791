// Every fetch of a test process opens a fresh connection (set as the global dispatcher that Node's
// fetch uses). With kept-alive connections, a request can be written to a socket in the very moment
// the server closes it for being idle (its keep-alive timeout): the request then fails with "other
// side closed" or ECONNRESET although the server never saw it, a known race of HTTP/1.1 keep-alive
// that a loaded machine makes likely. A test must fail only for what the server did. Loopback
// connections cost next to nothing.
//
// One undici Client per request, closed by us once its answer is read, rather than an Agent with
// `pipelining: 0`: that one asks the server to close (`Connection: close`), and undici 7 throws an
// uncatchable `assert(!this.paused)` when the server's FIN comes while the answer's body is still
// being read (a large, compressed one: /label/app.js), nodejs/undici#5360, fixed in undici 8 only,
// which needs Node 22. Here the connection is kept alive and it is the client that ends it.
import { Client, Dispatcher, setGlobalDispatcher } from 'undici';

class FreshConnections extends Dispatcher {
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const client = new Client(options.origin!, { pipelining: 1 });
    const accepted = client.dispatch(options, handler);
    // Closes once the request is done (its body read or abandoned), never in the middle of it.
    void client.close();
    return accepted;
  }

  // Nothing stays open to close: each client closes itself.
  override close(): Promise<void> {
    return Promise.resolve();
  }

  override destroy(): Promise<void> {
    return Promise.resolve();
  }
}

setGlobalDispatcher(new FreshConnections());
