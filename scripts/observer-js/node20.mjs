// js-libp2p 3 and its dependencies (it-queue, mortice, yamux, ping, …) call
// Promise.withResolvers, which Node.js has from version 22 on (p-retry, one of them, declares
// node >= 22). This repository's JavaScript floor is Node.js 20.19, so on Node 20 the observer
// adds the standard method (ECMAScript 2024) before anything of libp2p loads; elsewhere this does
// nothing.
if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers () {
      let resolve
      let reject
      const promise = new this((res, rej) => {
        resolve = res
        reject = rej
      })
      return { promise, resolve, reject }
    }
  })
}
