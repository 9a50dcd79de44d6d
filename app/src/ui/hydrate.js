// Starts the page's islands (inlined in every page: see `HYDRATE` in ui/mod.rs).
(function () {
  var started = false;
  function painted() {
    return performance.getEntriesByName('first-contentful-paint').length > 0;
  }
  function loaded() {
    setTimeout(start, 3000);
    // A task of its own: called from a load listener, the WASM's fetch would begin
    // before the load event has ended.
    if (painted()) return setTimeout(start);
    try {
      new PerformanceObserver(function () { if (painted()) start(); }).observe({ type: 'paint', buffered: true });
    } catch (e) {
      requestAnimationFrame(function () { setTimeout(start); });
    }
  }
  if (document.readyState === 'complete') loaded(); else addEventListener('load', loaded);

  function start() {
    if (started) return;
    started = true;
    // The preloads of the JS and the WASM, fetched side by side; not Leptos's script.
    var hints = document.getElementById('hydration').content.cloneNode(true);
    hints.querySelectorAll('script').forEach(function (script) { script.remove(); });
    var js = hints.querySelector('link[rel=modulepreload]').getAttribute('href');
    var wasm = hints.querySelector('link[rel=preload]').getAttribute('href');
    document.head.appendChild(hints);
    import(js).then(function (mod) {
      return mod.default({ module_or_path: wasm }).then(function () {
        mod.hydrate();
        return hydrateIslands(document.body, mod);
      });
    }).then(function () {
      document.body.setAttribute('data-hydrated', 'true');
    });
  }

  // A new task, so that the browser can paint and answer input between islands.
  function pause() {
    if (window.scheduler && scheduler.yield) return scheduler.yield();
    return new Promise(function (resolve) { setTimeout(resolve); });
  }

  // Settles once the island has started, or failed to (a lazy island's file missing, say,
  // after an upgrade): said in the console, and the other islands go on.
  function startIsland(node, mod) {
    var island = mod[node.dataset.component];
    function failed(error) {
      console.error('The island ' + node.dataset.component + ' did not start:', error);
    }
    if (!island) return Promise.resolve(console.warn('No WASM function for the island ' + node.dataset.component + '.'));
    try {
      return Promise.resolve(island(node)).catch(failed);
    } catch (error) {
      return Promise.resolve(failed(error));
    }
  }

  // Depth first, in document order. An island's server-rendered children (a
  // `<leptos-children>`) are handed to it by the callback the island left on them, so
  // such an island is awaited before its children are visited; the others (a lazy one
  // waits for its file) are not, so that two lazy islands' files are fetched side by
  // side. Settles once every island started has.
  async function hydrateIslands(root, mod) {
    var childrenCallbacks = [];
    var starting = [];
    async function visit(node) {
      var tag = node.tagName.toLowerCase();
      if (tag === 'leptos-island') {
        var panel = node.firstElementChild;
        if (panel && panel.tagName === 'DETAILS' && panel.hasAttribute('data-hydrate-on-open') && !panel.open &&
            !childrenCallbacks.length && !node.querySelector('leptos-children')) {
          // Started when first opened: until then it is server-drawn text, and its code
          // (a WASM file of its own in release builds) is not fetched.
          panel.addEventListener('toggle', function () { startIsland(node, mod); }, { once: true });
          return;
        }
        await pause();
        var onChildren = childrenCallbacks[childrenCallbacks.length - 1];
        if (onChildren) onChildren();
        var run = startIsland(node, mod);
        if (node.querySelector('leptos-children')) await run; else starting.push(run);
      } else if (tag === 'leptos-children') {
        childrenCallbacks.push(node.$$on_hydrate);
        for (const child of node.children) await visit(child);
        childrenCallbacks.pop();
        return;
      }
      for (const child of node.children) await visit(child);
    }
    await visit(root);
    await Promise.all(starting);
  }
})();
