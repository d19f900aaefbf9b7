//! The focused packet's card in the diagram's top right corner: the hop it is
//! at and its header as it is now, the rewritten field marked. Lines are
//! measured as drawn (Hangul a whole em) so a Korean line never runs past
//! the card; it never reaches over the entry row's boxes.

use crate::i18n::{tr, Lang};
use crate::measure::{clip, drawn_width, n, wrap};
use crate::state::Store;
use kpv_core::net::trace::{HopKind, Trace};
use kpv_core::view::scene::{card_h, CARD_FIRST, CARD_LINE, CARD_RIGHT, CARD_TOP};
use kpv_core::view::timeline::Position;
use leptos::prelude::*;

/// What the packet card shows (compared, so unchanged frames touch nothing).
#[derive(Clone, Debug, PartialEq)]
struct Card {
    x: f64,
    w: f64,
    /// The hop's sentence, on one or two lines.
    hop: Vec<String>,
    src: String,
    dst: String,
    src_changed: bool,
    dst_changed: bool,
}

/// Characters per line of the card (16.5 logical units of monospace: 18.7 px
/// at 1280 wide, where the scene is drawn at 1.13).
const CARD_CHARS: usize = 44;
const CARD_CHAR_W: f64 = 9.9;

/// The card for the focused packet at its current hop: what the hop was,
/// then the header as it is now, the rewritten field marked with ✎ as well as
/// colour (the event list has the before → after). `left` is where the entry
/// row's boxes end: the card never reaches over them.
fn card_at(trace: &Trace, pos: Position, lang: Lang, left: f64, lines: usize) -> Option<Card> {
    let hop = trace.hops.get(pos.hop)?;
    let src_changed = hop.before.src != hop.after.src;
    let dst_changed = hop.before.dst != hop.after.dst;
    let reply = matches!(hop.what, HopKind::Reply { .. });
    let mark = |changed: bool| if changed { "✎ " } else { "" };
    // The card's font: CARD_CHAR_W is 0.62 em of it; Hangul is a whole em.
    let px = CARD_CHAR_W / 0.62;
    let room =
        (CARD_RIGHT - left - 20.0).clamp(16.0 * CARD_CHAR_W, CARD_CHARS as f64 * CARD_CHAR_W);
    let src = clip(
        &format!(
            "{}{} {}{}",
            mark(src_changed),
            tr(lang, "packet.src"),
            hop.after.src,
            if reply { " ↩" } else { "" }
        ),
        room,
        px,
    );
    let dst = clip(
        &format!(
            "{}{} {}",
            mark(dst_changed),
            tr(lang, "packet.dst"),
            hop.after.dst
        ),
        room,
        px,
    );
    let hop_text = wrap(
        &format!(
            "{}. {}",
            pos.hop + 1,
            short_names(&crate::hops::summary(lang, hop))
        ),
        room,
        px,
        lines,
    );
    let w = hop_text
        .iter()
        .chain([&src, &dst])
        .map(|t| drawn_width(t, px))
        .fold(0.0, f64::max)
        + 20.0;
    Some(Card {
        x: CARD_RIGHT - w,
        w,
        hop: hop_text,
        src,
        dst,
        src_changed,
        dst_changed,
    })
}

/// `text` with the names that carry no answer made short, so the card's
/// lines keep the addresses whole: kube-proxy's chain hashes cut to their
/// first four characters (`KUBE-SEP-OAIG…`, nftables' `endpoint-H37Y…`) and
/// Cilium's map names without their `cilium_lb4_` prefix (`backends_v3`).
/// The caption and the hop list keep the whole names.
fn short_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        short_chain(word, &mut out);
    }
    out.replace("cilium_lb4_", "").replace("cilium_lb6_", "")
}

/// One word of a sentence, a chain name cut short: `KUBE-<KIND>-` and a
/// hash of 12 or more upper-case letters and digits, or nftables'
/// `service-`/`endpoint-`/`external-`/`firewall-` and a hash of 8 and a
/// `-` (the rest of its name runs to a `:`, `,` or `;`).
fn short_chain(word: &str, out: &mut String) {
    let b = word.as_bytes();
    let hash_at = |from: usize| {
        b.get(from..).map_or(0, |r| {
            r.iter()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                .count()
        })
    };
    let cut = if let Some(kind) = word.strip_prefix("KUBE-") {
        kind.find('-').map(|d| 6 + d).and_then(|at| {
            let n = hash_at(at);
            (n >= 12).then_some((at, at + n))
        })
    } else {
        ["service-", "endpoint-", "external-", "firewall-"]
            .iter()
            .find(|k| word.starts_with(**k))
            .and_then(|k| {
                let at = k.len();
                (hash_at(at) == 8 && b.get(at + 8) == Some(&b'-')).then(|| {
                    let end = word.find([':', ',', ';']).unwrap_or(word.len());
                    (at, end)
                })
            })
    };
    match cut {
        Some((at, rest)) => {
            out.push_str(&word[..at + 4]);
            out.push('…');
            out.push_str(&word[rest..]);
        }
        None => out.push_str(word),
    }
}

/// The focused packet's card, in the top right corner where it never covers
/// a node or Pod title. Its elements are made once; only their attributes
/// and text follow the packet. The hop's sentence takes up to the scene's
/// `card_lines` lines ([`card_h`] leaves room for them above the Services).
#[component]
pub(super) fn PacketCard() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = super::lang();
    let card = Memo::new(move |_| {
        let now = store.now.get();
        let reduced = store.reduced_motion.get();
        let lang = l.get();
        let pos = store
            .with_focused_flight(|f| f.position(now, reduced))
            .flatten()?;
        let (left, lines) = store.scene.with(|s| {
            let r = s.load_balancer.unwrap_or(s.client);
            (r.x + r.w + 8.0, s.card_lines)
        });
        store
            .with_focused_trace(|trace| card_at(trace, pos, lang, left, lines))
            .flatten()
    });
    let get =
        move |f: fn(&Card) -> String| move || card.with(|c| c.as_ref().map(f).unwrap_or_default());
    // The sentence's lines, then the source and destination below them.
    let lines = move || card.with(|c| c.as_ref().map_or(1, |c| c.hop.len().max(1)));
    let baseline = |k: usize| CARD_TOP + CARD_FIRST + k as f64 * CARD_LINE;
    let hop_line = move |k: usize| {
        move || {
            card.with(|c| {
                c.as_ref()
                    .and_then(|c| c.hop.get(k).cloned())
                    .unwrap_or_default()
            })
        }
    };
    view! {
        <Show when=move || card.with(Option::is_some)>
            <g class="packet-card" data-testid="packet-card" pointer-events="none">
                <rect x=get(|c| n(c.x)) y=n(CARD_TOP) width=get(|c| n(c.w)) height=move || n(card_h(lines())) rx="6" />
                <text x=get(|c| n(c.x + 10.0)) y=n(baseline(0)) class="mono card-hop">{hop_line(0)}</text>
                <text x=get(|c| n(c.x + 10.0)) y=n(baseline(1)) class="mono card-hop">{hop_line(1)}</text>
                <text x=get(|c| n(c.x + 10.0)) y=n(baseline(2)) class="mono card-hop">{hop_line(2)}</text>
                <text x=get(|c| n(c.x + 10.0)) y=move || n(baseline(lines())) class="mono"
                    class:rewritten=move || card.with(|c| c.as_ref().is_some_and(|c| c.src_changed))>
                    {get(|c| c.src.clone())}
                </text>
                <text x=get(|c| n(c.x + 10.0)) y=move || n(baseline(lines() + 1)) class="mono"
                    class:rewritten=move || card.with(|c| c.as_ref().is_some_and(|c| c.dst_changed))>
                    {get(|c| c.dst.clone())}
                </text>
            </g>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::short_names;

    #[test]
    fn chain_hashes_are_shortened_and_nothing_else() {
        assert_eq!(
            short_names("KUBE-SEP-OAIGUPJHOE4YU7HS: destination rewritten to 10.244.2.5:8080"),
            "KUBE-SEP-OAIG…: destination rewritten to 10.244.2.5:8080"
        );
        assert_eq!(
            short_names("matches, jumps to KUBE-SVC-CDGGSHYLG3RE2FKL"),
            "matches, jumps to KUBE-SVC-CDGG…"
        );
        assert_eq!(
            short_names(
                "endpoint-H37YOSAS-default/echo/tcp/http__fd00.10.244..2/8080: destination rewritten to [fd00:10:244::2]:8080"
            ),
            "endpoint-H37Y…: destination rewritten to [fd00:10:244::2]:8080"
        );
        assert_eq!(
            short_names("matches, jumps to service-2GUAAQIC-default/echo/tcp/http"),
            "matches, jumps to service-2GUA…"
        );
        assert_eq!(
            short_names("cilium_lb4_backends_v3: destination rewritten to 10.244.2.5:8080"),
            "backends_v3: destination rewritten to 10.244.2.5:8080"
        );
        assert_eq!(
            short_names("cilium_lb6_source_range: DROP; KUBE-SEP-OAIGUPJHOE4YU7HS"),
            "source_range: DROP; KUBE-SEP-OAIG…"
        );
        for whole in [
            "KUBE-SERVICES: matches, jumps to KUBE-NODEPORTS",
            "KUBE-MARK-MASQ",
            "KUBE-",
            "x KUBE-FW-AB",
            "cilium_lb",
        ] {
            assert_eq!(short_names(whole), whole);
        }
    }
}
