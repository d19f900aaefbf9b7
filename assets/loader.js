// Starts the app from a file rather than an inline <script>, so the page runs
// under `Content-Security-Policy: script-src 'self' 'wasm-unsafe-eval'`.
// Trunk writes the tag that loads this file (`pattern_script` in Trunk.toml)
// with the hashed names of the wasm-bindgen JS and the .wasm, already
// prefixed with the public URL, so a sub-path build (/docs/kpv/) works too.

// The page's colour scheme, for `theme=auto` (the default): the style sheet
// reads `data-dark` on the root element, kept in step with the system.
const scheme = matchMedia('(prefers-color-scheme: dark)');
const followScheme = () => document.documentElement.toggleAttribute('data-dark', scheme.matches);
followScheme();
scheme.addEventListener('change', followScheme);

// Embedded in a page, tell it the height this embed wants for its width:
// the diagram at full width (its viewBox's aspect) plus the playback bar.
// The page's kpv-embed.js sizes the iframe to it. Message shape:
// {kpv: "height", height: <CSS px>} (documented in the README).
if (window.parent !== window) {
  let last = 0;
  const post = () => {
    const app = document.querySelector('.app.embed');
    const vb = app && app.querySelector('svg.diagram')?.viewBox.baseVal;
    if (!vb || !(vb.width > 0)) return;
    const bar = app.querySelector('.playback');
    const h = Math.round(innerWidth * vb.height / vb.width + (bar ? bar.offsetHeight + 4 : 48));
    if (h > 0 && h !== last) {
      last = h;
      window.parent.postMessage({ kpv: 'height', height: h }, '*');
    }
  };
  new MutationObserver(post).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['viewBox'] });
  addEventListener('resize', post);
}

const tag = document.querySelector('script[data-kpv-js][data-kpv-wasm]');
const { default: init } = await import(tag.dataset.kpvJs);
await init({ module_or_path: tag.dataset.kpvWasm });
