// Starts the app from a file rather than an inline <script>, so the page runs
// under `Content-Security-Policy: script-src 'self' 'wasm-unsafe-eval'`.
// Trunk writes the tag that loads this file (`pattern_script` in Trunk.toml)
// with the hashed names of the wasm-bindgen JS and the .wasm, already
// prefixed with the public URL, so a sub-path build (/docs/kpv/) works too.
const tag = document.querySelector('script[data-kpv-js][data-kpv-wasm]');
const { default: init } = await import(tag.dataset.kpvJs);
await init({ module_or_path: tag.dataset.kpvWasm });
