//! The share-link codec: round trips, every class of damaged link, and the
//! seed scenario's link length.

use kpv_core::model::packet::Protocol;
use kpv_core::model::{Mode, NamespacedName, Scheduler};
use kpv_core::net::controller::{AppChange, AppState};
use kpv_core::net::trace::{Dest, Origin, Request};
use kpv_core::session::replay::SentPacket;
use kpv_core::session::share::{self, ShareError, ShareState, MAX_INFLATED, PREFIX};
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");

fn sample() -> ShareState {
    ShareState {
        yaml: SEED.to_string(),
        mode: Mode::Ipvs,
        scheduler: Some(Scheduler::Lc),
        seed: 42,
        speed_percent: 100,
        time_ms: 12_345,
        focus: Some(2),
        step: Some(3),
        changes: vec![AppChange {
            at_ms: 5_000,
            pod: NamespacedName::new("default", "alpaca-prod-abc12"),
            state: AppState::FailingReadiness,
        }],
        packets: (0..3)
            .map(|i| SentPacket {
                id: i,
                at_ms: 1000 * u64::from(i),
                request: Request {
                    origin: Origin::External {
                        client: IpAddr::V4(Ipv4Addr::new(198, 51, 100, 7)),
                    },
                    dst: Dest::Name("alpaca-service.default.svc.cluster.local".into()),
                    port: 8080,
                    protocol: Protocol::Tcp,
                    src_port: 40000 + i as u16,
                    keep_open: i == 1,
                },
                seed: 1000 + u64::from(i),
            })
            .collect(),
        lang: Some("ko".into()),
        rules_node: None,
    }
}

#[test]
fn sample_round_trips() {
    let s = sample();
    let link = share::encode(&s);
    assert!(link.starts_with(PREFIX));
    assert!(link
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.'));
    assert_eq!(share::decode(&link), Ok(s.clone()));
    assert_eq!(share::decode(&format!("#{link}")), Ok(s));
}

#[test]
fn seed_scenario_fits_in_a_url() {
    let mut s = sample();
    s.packets.clear();
    s.changes.clear();
    s.focus = None;
    let link = share::encode(&s);
    println!(
        "seed scenario: {} bytes of YAML -> share link of {} characters",
        SEED.len(),
        link.len()
    );
    assert!(link.len() < 2000, "link is {} characters", link.len());
    // 100 packets do not blow it up either.
    let mut s = sample();
    let p0 = s.packets[0].clone();
    s.packets = (0..100)
        .map(|i| SentPacket {
            id: i,
            at_ms: 700 * u64::from(i),
            seed: 0x9E37_79B9_u64.wrapping_mul(u64::from(i) + 1),
            request: Request {
                src_port: 40000 + i as u16,
                ..p0.request.clone()
            },
        })
        .collect();
    let link = share::encode(&s);
    println!("with 100 packets: {} characters", link.len());
    assert!(link.len() < 4000, "link is {} characters", link.len());
}

fn err_of(text: &str) -> ShareError {
    match share::decode(text) {
        Ok(s) => panic!("decoded {s:?}"),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            e
        }
    }
}

fn b64(bytes: &[u8]) -> String {
    format!("{PREFIX}{}", data_encoding::BASE64URL_NOPAD.encode(bytes))
}

#[test]
fn empty_link() {
    assert_eq!(err_of(""), ShareError::Empty);
    assert_eq!(err_of("#"), ShareError::Empty);
    assert_eq!(err_of("v1."), ShareError::Empty);
}

#[test]
fn wrong_prefix() {
    let link = share::encode(&sample());
    let v2 = link.replacen("v1.", "v2.", 1);
    assert!(matches!(err_of(&v2), ShareError::Version { .. }));
    assert!(matches!(err_of("hello"), ShareError::Version { .. }));
    assert!(err_of(&v2).to_string().contains("v2."));
}

#[test]
fn truncated_link() {
    let link = share::encode(&sample());
    for cut in [link.len() / 2, link.len() - 7, PREFIX.len() + 5] {
        let e = err_of(&link[..cut]);
        assert!(
            matches!(e, ShareError::Inflate | ShareError::Base64),
            "cut at {cut}: {e:?}"
        );
    }
}

#[test]
fn flipped_bytes() {
    let link = share::encode(&sample());
    let packed = data_encoding::BASE64URL_NOPAD
        .decode(&link.as_bytes()[PREFIX.len()..])
        .unwrap();
    let mut refused = 0;
    for i in (0..packed.len()).step_by(7) {
        let mut p = packed.clone();
        p[i] ^= 0x5a;
        // Either refused with an error, or (rarely) still a valid state:
        // never a panic.
        if share::decode(&b64(&p)).is_err() {
            refused += 1;
        }
    }
    assert!(refused > 0);
}

#[test]
fn non_base64_characters() {
    let link = share::encode(&sample());
    let mut bad = link.clone();
    bad.insert(10, '+');
    assert_eq!(err_of(&bad), ShareError::Base64);
    assert_eq!(err_of("v1.abc$def"), ShareError::Base64);
    assert_eq!(err_of("v1.한국어"), ShareError::Base64);
}

#[test]
fn inflate_bomb() {
    // 16 MiB of zeros deflates to a few KB.
    let zeros = vec![0u8; 16 * 1024 * 1024];
    let packed = miniz_oxide::deflate::compress_to_vec(&zeros, 9);
    let link = b64(&packed);
    assert!(link.len() < 100_000);
    assert_eq!(err_of(&link), ShareError::TooLarge);
    // Just over the limit of JSON-ish whitespace is refused as well.
    let spaces = vec![b' '; MAX_INFLATED + 1];
    let link = b64(&miniz_oxide::deflate::compress_to_vec(&spaces, 9));
    assert_eq!(err_of(&link), ShareError::TooLarge);
}

#[test]
fn valid_base64_of_garbage() {
    assert_eq!(
        err_of(&b64(b"this is not deflate data at all")),
        ShareError::Inflate
    );
    let not_json = miniz_oxide::deflate::compress_to_vec(b"hello, world", 6);
    assert!(matches!(err_of(&b64(&not_json)), ShareError::Json { .. }));
    let wrong_shape = miniz_oxide::deflate::compress_to_vec(br#"{"y": 3}"#, 6);
    assert!(matches!(
        err_of(&b64(&wrong_shape)),
        ShareError::Json { .. }
    ));
    let bad_mode =
        miniz_oxide::deflate::compress_to_vec(br#"{"y":"","m":"ebpf","r":1,"v":100,"t":0}"#, 6);
    assert!(matches!(err_of(&b64(&bad_mode)), ShareError::Json { .. }));
}

#[test]
fn out_of_range_values() {
    type Change = Box<dyn Fn(&mut ShareState)>;
    let cases: Vec<(&str, Change)> = vec![
        ("speed", Box::new(|s| s.speed_percent = 0)),
        ("speed", Box::new(|s| s.speed_percent = 60_000)),
        ("time", Box::new(|s| s.time_ms = u64::MAX)),
        ("focus", Box::new(|s| s.focus = Some(99))),
        ("step", Box::new(|s| s.step = Some(u32::MAX))),
        ("language", Box::new(|s| s.lang = Some("<script>".into()))),
        ("packet list", Box::new(|s| s.packets[1].id = 0)),
        ("packet time", Box::new(|s| s.packets[0].at_ms = u64::MAX)),
        (
            "app change time",
            Box::new(|s| s.changes[0].at_ms = u64::MAX),
        ),
    ];
    for (field, change) in cases {
        let mut s = sample();
        change(&mut s);
        match err_of(&share::encode(&s)) {
            ShareError::OutOfRange { field: f, .. } => assert_eq!(f, field),
            e => panic!("{field}: {e:?}"),
        }
    }
}

fn ip() -> impl Strategy<Value = IpAddr> {
    prop_oneof![
        any::<u32>().prop_map(|x| IpAddr::V4(Ipv4Addr::from(x))),
        any::<u128>().prop_map(|x| IpAddr::V6(Ipv6Addr::from(x))),
    ]
}

fn name() -> impl Strategy<Value = NamespacedName> {
    ("[a-z]{1,8}", "[a-z0-9-]{1,20}").prop_map(|(n, m)| NamespacedName::new(n, m))
}

fn origin() -> impl Strategy<Value = Origin> {
    prop_oneof![
        ip().prop_map(|client| Origin::External { client }),
        name().prop_map(|pod| Origin::Pod { pod }),
        ("[a-z0-9-]{1,12}", ip()).prop_map(|(node, src)| Origin::Node { node, src }),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    (
        origin(),
        prop_oneof![ip().prop_map(Dest::Ip), "[a-z.]{1,30}".prop_map(Dest::Name)],
        any::<u16>(),
        prop_oneof![
            Just(Protocol::Tcp),
            Just(Protocol::Udp),
            Just(Protocol::Sctp)
        ],
        any::<u16>(),
        any::<bool>(),
    )
        .prop_map(
            |(origin, dst, port, protocol, src_port, keep_open)| Request {
                origin,
                dst,
                port,
                protocol,
                src_port,
                keep_open,
            },
        )
}

fn state() -> impl Strategy<Value = ShareState> {
    let changes = proptest::collection::vec(
        (
            0..=share::MAX_TIME_MS,
            name(),
            proptest::sample::select(AppState::ALL.to_vec()),
        )
            .prop_map(|(at_ms, pod, state)| AppChange { at_ms, pod, state }),
        0..5,
    );
    let packets =
        proptest::collection::vec((0..=share::MAX_TIME_MS, request(), any::<u64>()), 0..6)
            .prop_map(|v| {
                v.into_iter()
                    .enumerate()
                    .map(|(i, (at_ms, request, seed))| SentPacket {
                        id: i as u32 * 3,
                        at_ms,
                        request,
                        seed,
                    })
                    .collect::<Vec<_>>()
            });
    (
        (
            any::<String>(),
            proptest::sample::select(Mode::ALL.to_vec()),
            proptest::option::of(proptest::sample::select(Scheduler::ALL.to_vec())),
            any::<u64>(),
            share::SPEED_RANGE,
            0..=share::MAX_TIME_MS,
        ),
        (
            any::<Option<prop::sample::Index>>(),
            proptest::option::of(0..=share::MAX_STEP),
            changes,
            packets,
            proptest::option::of("[a-z]{2}(-[a-z]{2})?"),
            proptest::option::of("[a-z0-9][a-z0-9.-]{0,40}"),
        ),
    )
        .prop_map(
            |(
                (yaml, mode, scheduler, seed, speed_percent, time_ms),
                (focus, step, changes, packets, lang, rules_node),
            )| {
                let focus = match (focus, packets.is_empty()) {
                    (Some(ix), false) => Some(packets[ix.index(packets.len())].id),
                    _ => None,
                };
                ShareState {
                    yaml,
                    mode,
                    scheduler,
                    seed,
                    speed_percent,
                    time_ms,
                    focus,
                    step,
                    changes,
                    packets,
                    lang,
                    rules_node,
                }
            },
        )
}

proptest! {
    #[test]
    fn round_trip(s in state()) {
        let link = share::encode(&s);
        prop_assert!(link.starts_with(PREFIX));
        // The hand-written JSON is byte for byte what serde's derives write,
        // so links stay identical to those of earlier builds.
        let derived = serde_json::to_vec(&s).unwrap();
        prop_assert_eq!(&link, &b64(&miniz_oxide::deflate::compress_to_vec(&derived, 9)));
        prop_assert_eq!(share::decode(&link), Ok(s));
    }

    #[test]
    fn decode_never_panics(text in ".{0,200}") {
        let _ = share::decode(&text);
    }

    #[test]
    fn decode_of_random_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = share::decode(&b64(&bytes));
    }
}

/// A link is offered only when it opens to the same state: each limit of
/// the decoder refuses the state instead (table of one over each limit).
#[test]
fn a_state_over_the_decoders_limits_gets_no_link() {
    let ok = sample();
    assert_eq!(
        share::encode_checked(&ok).map(|l| share::decode(&l)),
        Ok(Ok(ok.clone()))
    );
    let mut big_yaml = sample();
    big_yaml.yaml = "#".repeat(share::MAX_YAML + 1);
    let mut many = sample();
    many.packets = (0..=share::MAX_ITEMS as u32)
        .map(|i| SentPacket {
            id: i,
            ..sample().packets[0].clone()
        })
        .collect();
    many.focus = None;
    // Text that does not compress: the link is longer than the decoder
    // reads, although the YAML is within its 1 MiB.
    let mut noisy = sample();
    let mut x: u64 = 7;
    noisy.yaml = (0..share::MAX_YAML - 64)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            char::from(b' ' + 1 + ((x >> 33) % 94) as u8)
        })
        .filter(|c| *c != '"' && *c != '\\')
        .collect();
    for (state, field) in [
        (big_yaml, Some("scenario")),
        (many, Some("list of packets")),
        (noisy, None),
    ] {
        match share::encode_checked(&state) {
            Err(ShareError::OutOfRange { field: f, .. }) if Some(f) == field => {}
            Err(ShareError::TooLarge | ShareError::TooLong { .. }) if field.is_none() => {}
            other => panic!("{field:?}: {:?}", other.map(|l| l.len())),
        }
    }
}

/// Every state within the item and scenario limits travels: 10,000 packets
/// between Pods with long names, beside a large scenario, make a link that
/// opens (the inflated limit leaves room for them).
#[test]
fn the_most_packets_with_long_names_fit_in_a_link() {
    let mut s = sample();
    let long = "p".repeat(200);
    s.yaml = "# a scenario\n".repeat(60_000);
    s.packets = (0..share::MAX_ITEMS as u32)
        .map(|i| SentPacket {
            id: i,
            at_ms: u64::from(i) * 900,
            request: Request {
                origin: Origin::Pod {
                    pod: NamespacedName::new(
                        "a-namespace-of-sixty-characters-or-so-for-the-test",
                        &long,
                    ),
                },
                dst: Dest::Name(format!("{long}.default.svc.cluster.local")),
                port: 8080,
                protocol: Protocol::Tcp,
                src_port: 40000 + (i % 20000) as u16,
                keep_open: false,
            },
            seed: u64::MAX - u64::from(i),
        })
        .collect();
    s.focus = Some(9_999);
    let link = share::encode_checked(&s);
    assert!(link.is_ok(), "{:?}", link.map(|l| l.len()));
}

/// A link's packets that start from a Pod its scenario does not have are
/// named (each once), so the app can say why they go nowhere.
#[test]
fn packets_from_missing_pods_are_named() {
    let (cluster, _) = kpv_core::Code::ALL.parse(SEED);
    let mut s = sample();
    assert!(s.missing_origins(&cluster).is_empty());
    let real = cluster.pods[0].id.clone();
    let gone = NamespacedName::new("default", "gone-pod");
    for (i, pod) in [gone.clone(), real, gone.clone()].into_iter().enumerate() {
        s.packets[i].request.origin = Origin::Pod { pod };
    }
    assert_eq!(s.missing_origins(&cluster), vec![gone]);
}
