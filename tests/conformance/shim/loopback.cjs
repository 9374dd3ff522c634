// Preload (NODE_OPTIONS=--require): servers that call listen(port) with no host are bound to
// 127.0.0.1 only, never to every interface.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first && typeof first === 'object' && !Array.isArray(first)) {
    if (first.path === undefined && first.fd === undefined && first._handle === undefined &&
        !(first instanceof net.Server)) {
      args[0] = { ...first, host: '127.0.0.1' };
    }
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof args[1] === 'string') args[1] = '127.0.0.1'; else args.splice(1, 0, '127.0.0.1');
  } else if (first === undefined || typeof first === 'function') {
    args.unshift(0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
