// kube-proxy visualizer: the script for a page that embeds kpv. Each kpv
// iframe posts {kpv: "height", height: N} (the height it wants for its
// width); this sets that iframe's height. Load it once per page:
//   <script src="https://YOUR-HOST/kpv/kpv-embed.js" defer></script>
(function () {
  if (window.__kpvEmbedHost) return;
  window.__kpvEmbedHost = true;
  window.addEventListener('message', function (e) {
    var d = e.data;
    if (!d || d.kpv !== 'height' || typeof d.height !== 'number' || !(d.height > 0)) return;
    var frames = document.getElementsByTagName('iframe');
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow !== e.source) continue;
      var h = Math.round(Math.min(Math.max(d.height, 120), 4000));
      frames[i].style.aspectRatio = 'auto';
      frames[i].style.height = h + 'px';
    }
  });
})();
