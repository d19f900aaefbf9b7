// kube-proxy visualizer: the script for a page that embeds kpv. Load it once
// per page:
//   <script src="https://YOUR-HOST/kpv/kpv-embed.js" defer></script>
// Each kpv iframe posts {kpv: "height", height: N} (the height it wants for
// its width); this sets that iframe's height.
// A click-to-load embed is an element with the embed's address in
// data-kpv-click (and its title in title): until the reader clicks, it shows
// only the preset's poster (embed/posters/KEY.svg) and a Play button; the
// click puts the iframe in its place, playing.
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
  function poster(el) {
    var src = el.getAttribute('data-kpv-click');
    if (!src || el.getAttribute('data-kpv-ready')) return;
    el.setAttribute('data-kpv-ready', '1');
    var url = new URL(src, location.href);
    var ko = url.searchParams.get('lang') === 'ko';
    var title = el.getAttribute('title') || 'kube-proxy visualizer';
    var play = ko ? '▶ 재생' : '▶ Play';
    var b = document.createElement('button');
    b.type = 'button';
    b.className = 'kpv-poster';
    b.setAttribute('aria-label', play + ': ' + title);
    var s = b.style;
    s.position = 'relative'; s.display = 'block'; s.width = '100%'; s.padding = '0';
    s.border = '1px solid rgba(128,128,128,.4)'; s.borderRadius = '6px';
    s.background = 'transparent'; s.cursor = 'pointer'; s.overflow = 'hidden';
    var img = document.createElement('img');
    img.alt = '';
    img.src = new URL('posters/' + (url.searchParams.get('scenario') || 'alpaca-bandicoot') + '.svg', url).href;
    img.style.display = 'block'; img.style.width = '100%'; img.style.height = 'auto';
    img.onerror = function () { img.style.display = 'none'; b.style.minHeight = '200px'; };
    var badge = document.createElement('span');
    badge.textContent = play;
    var t = badge.style;
    t.position = 'absolute'; t.left = '50%'; t.top = '50%'; t.transform = 'translate(-50%,-50%)';
    t.padding = '12px 22px'; t.borderRadius = '24px'; t.background = '#1d4ed8'; t.color = '#fff';
    t.font = '600 20px system-ui,sans-serif'; t.boxShadow = '0 2px 10px rgba(0,0,0,.35)';
    b.appendChild(img);
    b.appendChild(badge);
    b.addEventListener('click', function () {
      url.searchParams.set('play', '1');
      var f = document.createElement('iframe');
      f.src = url.href;
      f.title = title;
      f.allowFullscreen = true;
      f.style.width = '100%'; f.style.aspectRatio = '16/10'; f.style.border = '0';
      el.replaceChildren(f);
      f.focus();
    });
    el.replaceChildren(b);
  }
  function scan() {
    var els = document.querySelectorAll('[data-kpv-click]');
    for (var i = 0; i < els.length; i++) poster(els[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', scan);
  else scan();
})();
