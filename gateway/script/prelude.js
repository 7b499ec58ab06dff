// The API a script sees. The host functions it wraps are taken off the
// global object first, so a script reaches the gateway only through these.
(() => {
  const g = globalThis;
  const call = g.__mcpgw_call, search = g.__mcpgw_search, describe = g.__mcpgw_describe;
  const emitJSON = g.__mcpgw_emit, log = g.__mcpgw_log, finish = g.__mcpgw_finish;
  for (const k of ["__mcpgw_call", "__mcpgw_search", "__mcpgw_describe", "__mcpgw_emit", "__mcpgw_log", "__mcpgw_finish"]) {
    delete g[k];
  }
  const pending = new Map();
  let next = 0;
  const text = (v) => {
    if (typeof v === "string") return v;
    try {
      const s = JSON.stringify(v);
      return s === undefined ? String(v) : s;
    } catch (e) {
      return String(v);
    }
  };
  const json = (v) => {
    const s = JSON.stringify(v === undefined ? null : v);
    return s === undefined ? "null" : s;
  };
  Object.defineProperty(g, "__mcpgw_settle", {
    value: (id, outcome) => {
      const resolve = pending.get(id);
      if (resolve) {
        pending.delete(id);
        resolve(outcome);
      }
    },
  });
  g.tools = Object.freeze({
    call(name, args) {
      if (typeof name !== "string" || name === "") {
        return Promise.resolve({ ok: false, error: { code: "invalid_args", message: "tools.call(name, args): name must be a tool's name" } });
      }
      let a;
      try {
        a = JSON.stringify(args === undefined ? {} : args);
      } catch (e) {
        return Promise.resolve({ ok: false, error: { code: "invalid_args", message: "arguments are not JSON: " + e } });
      }
      const id = ++next;
      return new Promise((resolve) => {
        const refused = call(id, name, a);
        if (refused) {
          resolve(JSON.parse(refused));
          return;
        }
        pending.set(id, resolve);
      });
    },
    search(query, opts) {
      const limit = opts && typeof opts.limit === "number" ? opts.limit : 0;
      const offset = opts && typeof opts.offset === "number" ? opts.offset : 0;
      return JSON.parse(search(String(query ?? ""), offset, limit));
    },
    describe(name) {
      const s = describe(String(name ?? ""));
      return s === "" ? null : JSON.parse(s);
    },
  });
  g.emit = (v) => {
    emitJSON(json(v));
  };
  const c = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    c[level] = (...a) => log(level, a.map(text).join(" "));
  }
  g.console = Object.freeze(c);
  Object.defineProperty(g, "__mcpgw_run", {
    value: (body) => {
      let p;
      try {
        p = Promise.resolve(body());
      } catch (e) {
        p = Promise.reject(e);
      }
      p.then(
        (v) => {
          let s;
          try {
            s = json(v);
          } catch (e) {
            finish(false, "the returned value is not JSON: " + e);
            return;
          }
          finish(true, s);
        },
        (e) => finish(false, e && e.stack ? String(e) + "\n" + e.stack : String(e)),
      );
    },
  });
})();
