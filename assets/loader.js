// kpv: starts the app; see ARCHITECTURE.md (assets/).
const dark = matchMedia('(prefers-color-scheme: dark)');
const scheme = () => document.documentElement.toggleAttribute('data-dark', dark.matches);
scheme();
dark.addEventListener('change', scheme);
if (parent !== window) {
  let last = 0;
  const post = () => {
    const app = document.querySelector('.app.embed');
    const vb = app?.querySelector('svg.diagram')?.viewBox.baseVal;
    const bar = app?.querySelector('.playback');
    const h = vb?.width > 0 ? Math.round(innerWidth * vb.height / vb.width + (bar ? bar.offsetHeight + 4 : 48)) : 0;
    if (h > 0 && h !== last) parent.postMessage({ kpv: 'height', height: (last = h) }, '*');
  };
  new MutationObserver(post).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['viewBox'] });
  addEventListener('resize', post);
}
const sized = new ResizeObserver(() => dispatchEvent(new Event('resize')));
let watched = null;
new MutationObserver(() => {
  if (watched?.isConnected) return;
  watched = document.querySelector('.app.embed svg.diagram');
  if (watched) sized.observe(watched);
}).observe(document.body, { subtree: true, childList: true });
const tag = document.querySelector('script[data-kpv-js][data-kpv-wasm]');
const { default: init } = await import(tag.dataset.kpvJs);
await init({ module_or_path: tag.dataset.kpvWasm });
