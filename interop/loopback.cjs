// Preloaded with `node --require interop/loopback.cjs …`: server-everything calls
// app.listen(PORT) with no host, i.e. on every interface. This pins every TCP listen
// in the process to 127.0.0.1 so the interop suite never listens beyond loopback.
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string" && /^\d+$/.test(args[0])) {
    // listen(port[, host][, backlog][, cb]) → force host
    const port = Number(args[0]);
    const rest = args.slice(1).filter((a) => typeof a !== "string");
    return listen.call(this, port, "127.0.0.1", ...rest);
  }
  if (args[0] && typeof args[0] === "object" && !Array.isArray(args[0]) && "port" in args[0]) {
    return listen.call(this, { ...args[0], host: "127.0.0.1" }, ...args.slice(1));
  }
  return listen.apply(this, args);
};
