"""Static server for the end-to-end suite that sends the strict
Content-Security-Policy a documentation site may set on the app:
no inline script or style, no eval, WebAssembly compilation allowed.

Serves the root build (dist/) at / and the sub-path build (target/site/)
under /docs/kpv/, the way a static host would, with .wasm as application/wasm.

    python3 csp_server.py PORT ROOT_DIST SITE_DIR
"""

import http.server
import os
import sys

CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'"
SUB_PATH = "/docs/kpv/"


def main():
    port = int(sys.argv[1])
    dist = os.path.abspath(sys.argv[2])
    site = os.path.abspath(sys.argv[3])

    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map = {
            **http.server.SimpleHTTPRequestHandler.extensions_map,
            ".wasm": "application/wasm",
            ".js": "text/javascript",
        }

        def translate_path(self, path):
            root = site if path.startswith(SUB_PATH) else dist
            rel = os.path.relpath(super().translate_path(path), os.getcwd())
            return os.path.join(root, rel)

        def end_headers(self):
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Cache-Control", "no-store")
            super().end_headers()

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
