//! The two labs: where N connections land (load balancing), and how rules
//! grow with the number of Services (scaling).
//!
//! Both are measured by kpv-core — [`kpv_core::session::lab::LbLab`] traces real
//! packets, [`kpv_core::session::lab::ScaleLab`] compiles real rulesets — in slices
//! between frames ([`crate::work`]), with progress shown as they go.

use super::one_decimal;
use super::{lang, t};
use crate::i18n::{tr, Lang};
use crate::state::Store;
use kpv_core::model::{Mode, Scheduler};
use kpv_core::session::lab::{
    self, Bucket, Expectation, LabRun, Landing, LbLab, ScaleLab, ScalePoint,
};
use leptos::prelude::*;

fn landing_key(l: Landing) -> Option<&'static str> {
    match l {
        Landing::Delivered => None,
        Landing::TimedOut => Some("lab.timed-out"),
        Landing::Dropped => Some("verdict.dropped"),
        Landing::Rejected => Some("verdict.rejected"),
        Landing::Node => Some("verdict.accepted"),
        Landing::Unrouted => Some("verdict.unrouted"),
        Landing::NoSuchName => Some("verdict.no-name"),
    }
}

fn bucket_label(l: Lang, b: &Bucket) -> String {
    match (landing_key(b.landing), b.name.is_empty()) {
        (None, _) => b.name.clone(),
        (Some(k), true) => tr(l, k).to_string(),
        (Some(k), false) => format!("{} ({})", b.name, tr(l, k)),
    }
}

/// What theory says, in words, and the share each endpoint should get.
fn expectation_text(
    l: Lang,
    e: &Expectation,
    mode: Mode,
    sched: Scheduler,
) -> (String, Option<f64>) {
    match e {
        Expectation::Random { share, .. } => (tr(l, "lab.expect.random").to_string(), Some(*share)),
        Expectation::RoundRobin { share, .. } => (tr(l, "lab.expect.rr").to_string(), Some(*share)),
        Expectation::CountDriven { share, .. } => {
            (tr(l, "lab.expect.count").to_string(), Some(*share))
        }
        Expectation::OneEndpoint { .. } => {
            let hashing = mode == Mode::Ipvs
                && matches!(sched, Scheduler::Sh | Scheduler::Dh | Scheduler::Mh);
            let key = if hashing {
                "lab.expect.hash"
            } else {
                "lab.expect.affinity"
            };
            (tr(l, key).to_string(), None)
        }
        Expectation::Nothing => (tr(l, "lab.expect.nothing").to_string(), None),
    }
}

/// Most connections one run sends.
const MAX_N: u32 = 10_000;

#[component]
pub fn LoadBalancingLab() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let n = RwSignal::new(1000u32);
    let seed = RwSignal::new(1u64);
    let long_lived = RwSignal::new(false);
    let run = RwSignal::new(None::<LbLab>);
    let progress = RwSignal::new((0usize, 0usize));
    let buckets = RwSignal::new(Vec::<Bucket>::new());
    let expect = RwSignal::new(None::<(Expectation, Mode, Scheduler)>);
    let running = RwSignal::new(false);
    let start = move |_| {
        let Some(target) = store.current_target() else {
            return;
        };
        let origin = store.current_origin(&target);
        // Runs only in a mode whose code is here (the button waits for it).
        let Some(mode) = store.live_mode.get_untracked() else {
            return;
        };
        let sched = store.scheduler.get_untracked();
        let run_of = LabRun {
            connections: n.get_untracked(),
            seed: seed.get_untracked(),
            long_lived: long_lived.get_untracked(),
            ..LabRun::new(
                mode,
                Some(sched),
                &target,
                &origin,
                crate::code::now().replay(),
            )
        };
        let (lab, e) = store
            .parsed
            .with_untracked(|(c, _)| (LbLab::new(c, &run_of), lab::expected_share(c, &run_of)));
        progress.set((0, lab.total()));
        buckets.set(Vec::new());
        expect.set(Some((e, mode, sched)));
        run.set(Some(lab));
        crate::work::while_running(running, move || {
            let began = crate::work::now_ms();
            let mut more = true;
            run.update(|r| {
                if let Some(lab) = r.as_mut() {
                    while crate::work::now_ms() - began < crate::work::SLICE_MS {
                        if lab.step(20) == 0 {
                            more = false;
                            break;
                        }
                    }
                    progress.set((lab.done(), lab.total()));
                    buckets.set(lab.buckets());
                } else {
                    more = false;
                }
            });
            more
        });
    };
    let chart = move || {
        let bs = buckets.get();
        let (done, total) = progress.get();
        let lang = l.get();
        let share = expect.with(|e| {
            e.as_ref()
                .and_then(|(e, m, s)| expectation_text(lang, e, *m, *s).1)
        });
        let max = bs.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64;
        let scale = |v: f64| {
            400.0 * v
                / max
                    .max(share.map(|s| s * done as f64).unwrap_or(0.0))
                    .max(1.0)
        };
        let rows = bs.len().max(1);
        let height = 28 * rows + 10;
        view! {
            <svg class="lab-chart" data-testid="lab-chart" viewBox=format!("0 0 760 {height}") role="img" aria-label=tr(lang, "lab.lb.title")>
                {bs.iter().enumerate().map(|(i, b)| {
                    let y = 6 + 28 * i;
                    let w = scale(b.count as f64);
                    let pct = if done > 0 { 100.0 * b.count as f64 / done as f64 } else { 0.0 };
                    let expected = (b.landing == Landing::Delivered).then_some(share).flatten().map(|s| scale(s * done as f64));
                    view! {
                        <g data-testid="lab-bar" data-label=b.label.clone() data-count=b.count.to_string()>
                            <text x="0" y=(y + 17).to_string() class="small">{bucket_label(lang, b)}<title>{b.label.clone()}</title></text>
                            <rect x="250" y=y.to_string() width=one_decimal(w) height="20" rx="3" class=if b.landing == Landing::Delivered { "bar" } else { "bar bad" } />
                            {expected.map(|x| view! { <line class="expected" x1=one_decimal(250.0 + x) x2=one_decimal(250.0 + x) y1=(y - 3).to_string() y2=(y + 23).to_string() /> })}
                            <text x=one_decimal(256.0 + w) y=(y + 15).to_string() class="small mono">{format!("{} ({}%)", b.count, one_decimal(pct))}</text>
                        </g>
                    }
                }).collect_view()}
            </svg>
            <p class="small muted" data-testid="lab-progress-text">{format!("{done} / {total}")}</p>
        }
    };
    view! {
        <section class="panel lab" data-testid="lab-lb">
            <h2>{t("lab.lb.title")}</h2>
            <p class="small muted">{t("lab.lb.hint")}</p>
            <div class="toolbar">
                <label class="narrow">
                    <span>{t("lab.n")}</span>
                    <input data-testid="lab-n" type="number" min="10" max=MAX_N.to_string() step="10"
                        prop:value=move || n.get().to_string()
                        on:change=move |ev| n.set(event_target_value(&ev).trim().parse::<u32>().unwrap_or(1000).clamp(10, MAX_N)) />
                </label>
                <label class="narrow">
                    <span>{t("label.seed")}</span>
                    <input data-testid="lab-seed" type="number" min="0"
                        prop:value=move || seed.get().to_string()
                        on:change=move |ev| seed.set(event_target_value(&ev).trim().parse::<u64>().unwrap_or(1)) />
                </label>
                <label class="check">
                    <input data-testid="lab-long-lived" type="checkbox" prop:checked=move || long_lived.get()
                        on:change=move |ev| long_lived.set(event_target_checked(&ev)) />
                    <span>{t("lab.long-lived")}</span>
                </label>
                <button data-testid="lab-run" class="primary" on:click=start disabled=move || running.get() || store.live_mode.with(Option::is_none)>{t("lab.run")}</button>
                <button data-testid="lab-stop" on:click=move |_| running.set(false) disabled=move || !running.get()>{t("lab.stop")}</button>
                <progress data-testid="lab-progress" max=move || progress.get().1.max(1).to_string() value=move || progress.get().0.to_string()></progress>
            </div>
            <p class="small" data-testid="lab-expectation">
                {move || expect.with(|e| e.as_ref().map(|(e, m, s)| {
                    let mode = match m { Mode::Ipvs => format!("IPVS {}", s.as_str()), m => m.as_str().to_string() };
                    format!("{mode}: {}", expectation_text(l.get(), e, *m, *s).0)
                }))}
            </p>
            {chart}
        </section>
    }
}

/// The modes the scaling lab compares.
const SCALE_MODES: [Mode; 3] = [Mode::Iptables, Mode::Ipvs, Mode::Nftables];

fn mode_class(m: Mode) -> &'static str {
    match m {
        Mode::Iptables => "s-iptables",
        Mode::Ipvs => "s-ipvs",
        Mode::Nftables => "s-nftables",
        Mode::Userspace => "s-userspace",
        Mode::Cilium => "s-cilium",
    }
}

/// A count as an axis writes it: plain digits, thousands apart
/// (`10,000`, not `1e4`).
fn plain(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A log-log line chart of one figure of the scale points.
fn scale_chart(
    points: &[(ScalePoint, f64)],
    title: String,
    value: fn(&ScalePoint) -> usize,
    testid: &'static str,
) -> impl IntoView {
    // Room on the left for "1,000,000" and on the right for half of
    // "10,000", at 16 units (about 16 px where the chart is drawn).
    let (w, h, left, bottom) = (440.0, 220.0, 92.0, 26.0);
    let sizes = ScaleLab::SIZES;
    let x_of = |n: usize| {
        let (lo, hi) = (
            (sizes[0] as f64).log10(),
            (sizes[sizes.len() - 1] as f64).log10(),
        );
        left + (w - left - 36.0) * ((n.max(1) as f64).log10() - lo) / (hi - lo)
    };
    let max_v = points
        .iter()
        .map(|(p, _)| value(p))
        .max()
        .unwrap_or(10)
        .max(10) as f64;
    let top_exp = max_v.log10().ceil().max(1.0);
    let y_of = |v: usize| h - bottom - (h - bottom - 8.0) * ((v.max(1) as f64).log10() / top_exp);
    let lines = SCALE_MODES.map(|m| {
        let pts: Vec<String> = points
            .iter()
            .filter(|(p, _)| p.mode == m)
            .map(|(p, _)| {
                format!(
                    "{},{}",
                    one_decimal(x_of(p.n_services)),
                    one_decimal(y_of(value(p)))
                )
            })
            .collect();
        view! { <polyline class=format!("series {}", mode_class(m)) points=pts.join(" ") /> }
    });
    let grid = (0..=top_exp as u32).map(|e| {
        let y = y_of(10usize.pow(e));
        view! {
            <line class="grid" x1=one_decimal(left) x2=one_decimal(w - 8.0) y1=one_decimal(y) y2=one_decimal(y) />
            <text class="small muted" x=one_decimal(left - 4.0) y=one_decimal(y + 5.0) text-anchor="end">{plain(10usize.pow(e))}</text>
        }
    }).collect_view();
    // Powers of ten are labelled; the sizes between are points on the lines.
    let ticks = sizes
        .into_iter()
        .filter(|&n| n > 0 && 10usize.pow(n.ilog10()) == n)
        .map(|n| view! { <text class="small muted" x=one_decimal(x_of(n)) y=one_decimal(h - 6.0) text-anchor="middle">{plain(n)}</text> })
        .collect_view();
    view! {
        <figure class="scale-chart">
            <figcaption class="small">{title}</figcaption>
            <svg data-testid=testid viewBox=format!("0 0 {} {}", one_decimal(w), one_decimal(h)) role="img">
                {grid}
                {ticks}
                {lines}
            </svg>
        </figure>
    }
}

/// The first screen's way to the scaling lab: it takes the diagram's place
/// (as the compare view does), and a second click brings the diagram back.
#[component]
pub fn ScaleToggle(scaling: RwSignal<bool>, comparing: RwSignal<bool>) -> impl IntoView {
    view! {
        <button data-testid="scale-toggle" aria-pressed=move || scaling.get().to_string()
            on:click=move |_| {
                scaling.update(|s| *s = !*s);
                comparing.set(false);
            }>
            {move || if scaling.get() { t("compare.back")() } else { t("lab.scale.show")() }}
        </button>
    }
}

#[component]
pub fn ScalingLab() -> impl IntoView {
    let l = lang();
    let per_service = RwSignal::new(3usize);
    let lab_state = RwSignal::new(None::<ScaleLab>);
    let points = RwSignal::new(Vec::<(ScalePoint, f64)>::new());
    let running = RwSignal::new(false);
    let progress = RwSignal::new((0usize, 0usize));
    // The modes it compiles, once a run is asked for (their code may still
    // have to come: the run starts when it is here).
    let needs = RwSignal::new(Vec::<Mode>::new());
    let store = expect_context::<Store>();
    let begin = move || {
        let lab = ScaleLab::new(
            &ScaleLab::SIZES,
            &SCALE_MODES,
            per_service.get_untracked(),
            crate::modes::compilers(),
        );
        progress.set((0, lab.total()));
        points.set(Vec::new());
        lab_state.set(Some(lab));
        crate::work::while_running(running, move || {
            let began = crate::work::now_ms();
            let mut more = true;
            lab_state.try_update(|s| match s.as_mut() {
                Some(lab) => {
                    match lab.step() {
                        Some(p) => {
                            let ms = crate::work::now_ms() - began;
                            points.try_update(|ps| ps.push((p, ms)));
                        }
                        None => more = false,
                    }
                    progress.try_set((lab.done(), lab.total()));
                }
                None => more = false,
            });
            let (done, total) = progress.try_get_untracked().unwrap_or_default();
            more && done < total
        });
    };
    let start = move |_| {
        needs.set(SCALE_MODES.to_vec());
        leptos::task::spawn_local(async move {
            if crate::mode_fetch::ensure_all(store, &SCALE_MODES)
                .await
                .is_ok()
            {
                begin();
            }
        });
    };
    view! {
        <section class="panel lab" data-testid="lab-scale">
            <h2>{t("lab.scale.title")}</h2>
            <p class="small muted">{t("lab.scale.hint")}</p>
            <div class="toolbar">
                <label class="narrow">
                    <span>{t("lab.per-service")}</span>
                    <select data-testid="lab-endpoints" on:change=move |ev| per_service.set(event_target_value(&ev).parse().unwrap_or(3).clamp(1, 10))>
                        {(1..=10).map(|k| view! { <option value=k.to_string() selected=move || per_service.get() == k>{k.to_string()}</option> }).collect_view()}
                    </select>
                </label>
                <button data-testid="scale-run" class="primary" on:click=start disabled=move || running.get()>{t("lab.run")}</button>
                <button data-testid="scale-stop" on:click=move |_| running.set(false) disabled=move || !running.get()>{t("lab.stop")}</button>
                <progress data-testid="scale-progress" max=move || progress.get().1.max(1).to_string() value=move || progress.get().0.to_string()></progress>
                <span class="small mono" data-testid="scale-progress-text">{move || format!("{} / {}", progress.get().0, progress.get().1)}</span>
            </div>
            <super::modewait::ModeWait modes=needs id="scale-mode" />
            <p class="legend small">
                {SCALE_MODES.map(|m| view! { <span class=format!("key {}", mode_class(m))>{m.as_str()}</span> })}
            </p>
            <div class="scale-charts">
                {move || scale_chart(&points.get(), tr(l.get(), "lab.compared").to_string(), |p| p.compared_last, "scale-compared")}
                {move || scale_chart(&points.get(), tr(l.get(), "lab.ruleset").to_string(), |p| p.rules, "scale-rules")}
            </div>
            <table class="scale-table small" data-testid="scale-table">
                <thead><tr>
                    <th>{t("lab.services")}</th><th>{t("label.mode")}</th><th>{t("lab.compared")}</th><th>{t("lab.ruleset")}</th><th>{t("lab.time")}</th>
                </tr></thead>
                <tbody>
                    {move || points.get().into_iter().map(|(p, ms)| view! {
                        <tr data-testid="scale-row" data-mode=p.mode.as_str() data-services=p.n_services.to_string()
                            data-compared=p.compared_last.to_string() data-rules=p.rules.to_string()>
                            <td class="mono">{p.n_services.to_string()}</td>
                            <td>{p.mode.as_str()}</td>
                            <td class="mono">{format!("{} → {}", p.compared_first, p.compared_last)}</td>
                            <td class="mono">{p.rules.to_string()}</td>
                            <td class="mono">{format!("{} ms", ms.max(0.0).round() as u64)}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn axis_numbers_are_plain_with_thousands_apart() {
        let shown: Vec<String> = [1, 10, 999, 1000, 10_000, 1_000_000]
            .into_iter()
            .map(plain)
            .collect();
        assert_eq!(shown, ["1", "10", "999", "1,000", "10,000", "1,000,000"]);
    }
}
