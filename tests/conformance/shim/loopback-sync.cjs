// Preload (NODE_OPTIONS=--require) for the client scenarios (run.sh client): as loopback.cjs,
// servers that call listen(port) with no host are bound to 127.0.0.1 only, but here the socket is
// bound before listen() returns, as it is without a host: several client scenarios read
// server.address().port on the line after app.listen(0), which a host (resolved asynchronously)
// would leave null. Other forms of listen() go through loopback.cjs.
require('./loopback.cjs');
const net = require('net');
const { TCP, constants } = process.binding('tcp_wrap');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const portOnly = typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first));
  const noHost = (portOnly && typeof args[1] !== 'string') || first === undefined ||
      typeof first === 'function';
  if (!noHost) return listen.apply(this, args);
  const handle = new TCP(constants.SERVER);
  if (handle.bind('127.0.0.1', portOnly ? Number(first) : 0) !== 0) {
    handle.close();
    return listen.apply(this, args);
  }
  const callback = args.find((a) => typeof a === 'function');
  return callback ? listen.call(this, { _handle: handle }, callback)
                  : listen.call(this, { _handle: handle });
};
