//! Every user-visible string, in English and Korean.
//!
//! Components never write UI text inline: they ask [`tr`] for a key. The
//! table holds both languages for every key (a test checks that none is
//! missing or empty), so a workshop can switch language without leftovers.
//!
//! In the release build (feature `split`) the Korean column is not compiled
//! in: it is a file of the site, `data/i18n/ko.tsv` (`assets/i18n/ko.tsv`,
//! written from these tables and checked against them by a test), fetched
//! when Korean is first chosen; until it has arrived [`tr`] gives English.

#[cfg(feature = "full")]
pub mod full;
pub mod http;

use kpv_core::net::modes::DropReason;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lang {
    #[default]
    En,
    Ko,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Ko];

    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ko => "ko",
        }
    }

    pub fn parse(s: &str) -> Option<Lang> {
        match s.get(..2).map(str::to_ascii_lowercase).as_deref() {
            Some("en") => Some(Lang::En),
            Some("ko") => Some(Lang::Ko),
            _ => None,
        }
    }
}

/// A Korean text of the tables: itself, or nothing in the release build,
/// which fetches it (see the module's comment).
#[cfg(not(feature = "split"))]
macro_rules! ko {
    ($s:literal) => {
        $s
    };
}
#[cfg(feature = "split")]
macro_rules! ko {
    ($s:literal) => {
        ""
    };
}
pub(crate) use ko;

/// A table of `(key, English, Korean)` entries, its Korean through [`ko`].
macro_rules! words {
    ($(($k:literal, $en:literal, $ko:literal $(,)?)),* $(,)?) => {
        &[$(($k, $en, $crate::i18n::ko!($ko))),*]
    };
}
pub(crate) use words;

/// (key, English, Korean)
pub const TABLE: &[(&str, &str, &str)] = words![
    (
        "app.title",
        "kube-proxy visualizer",
        "kube-proxy 시각화 도구",
    ),
    (
        "app.subtitle",
        "How traffic reaches Pods through a Service",
        "서비스를 통해 트래픽이 파드에 도달하는 방법",
    ),
    ("label.scenario", "Scenario", "시나리오"),
    ("label.mode", "kube-proxy mode", "kube-proxy 모드"),
    ("label.scheduler", "IPVS scheduler", "IPVS 스케줄러"),
    ("label.from", "From", "출발지"),
    ("label.to", "To", "목적지"),
    ("label.speed", "Speed", "속도"),
    ("label.burst", "Burst size", "묶음 크기"),
    (
        "mode.userspace",
        "userspace (legacy, removed in 1.26)",
        "userspace (레거시, 1.26에서 제거됨)",
    ),
    ("mode.iptables", "iptables (the default)", "iptables (기본값)"),
    ("mode.ipvs", "IPVS (deprecated in 1.35)", "IPVS (1.35에서 지원 중단 예고)"),
    ("mode.nftables", "nftables (GA in 1.33)", "nftables (1.33에서 GA)"),
    ("mode.cilium", "Cilium (eBPF, no kube-proxy)", "Cilium (eBPF, kube-proxy 없음)"),
    (
        "origin.auto",
        "automatic (outside for external addresses, else a client Pod)",
        "자동 (외부 주소는 외부에서, 그 외는 클라이언트 파드에서)",
    ),
    ("origin.external", "External client", "외부 클라이언트"),
    ("origin.pod", "Pod", "파드"),
    ("origin.node", "Node", "노드"),
    ("target.dns-name", "DNS name", "DNS 이름"),
    ("target.cluster-ip", "ClusterIP", "ClusterIP"),
    ("target.node-port", "NodePort", "NodePort"),
    ("target.load-balancer", "LoadBalancer", "로드밸런서"),
    ("target.external-ip", "externalIP", "externalIP"),
    ("btn.send", "Send packet", "패킷 보내기"),
    ("btn.burst", "Send burst", "묶음 보내기"),
    ("btn.play", "Play", "재생"),
    ("btn.pause", "Pause", "일시정지"),
    ("btn.step-back", "Step back", "이전 단계"),
    ("btn.step-forward", "Step forward", "다음 단계"),
    ("btn.restart", "Replay packet", "패킷 다시 보기"),
    ("btn.reset", "Reset", "초기화"),
    (
        "btn.reset-title",
        "Replay from the cluster's creation (t = 0, probes not yet run)",
        "클러스터 생성 시점부터 다시 재생 (t = 0, 프로브 실행 전)",
    ),
    ("btn.continuous", "Continuous traffic", "연속 트래픽"),
    ("traffic.cap", "This session holds 20,000 packets, the most the simulation keeps: sending has stopped. Reset to send more. (A share link carries up to 10,000.)", "이 세션에 패킷이 20,000개 쌓였습니다. 시뮬레이션이 보관하는 최대치라 더 보내지 않습니다. 더 보내려면 초기화하세요. (공유 링크에는 10,000개까지 담깁니다.)"),
    ("btn.fail-readiness", "Fail readiness", "준비성 실패"),
    ("btn.pass-readiness", "Pass readiness", "준비성 통과"),
    ("btn.app-down", "Take app down", "앱 중지"),
    ("btn.app-up", "Bring app up", "앱 시작"),
    ("btn.fail-liveness", "Fail liveness", "활성 검사 실패"),
    ("btn.pass-liveness", "Pass liveness", "활성 검사 통과"),
    ("panel.verdict", "Latest packet", "최근 패킷"),
    ("panel.hops", "Hops", "홉"),
    ("panel.endpoints", "EndpointSlice", "EndpointSlice"),
    ("panel.pods", "Pods and probes", "파드와 프로브"),
    ("clock", "Simulated time", "시뮬레이션 시간"),
    (
        "empty.packets",
        "No packet sent yet. Press “Send packet” to follow one.",
        "아직 보낸 패킷이 없습니다. “패킷 보내기”를 눌러 따라가 보세요.",
    ),
    (
        "empty.no-targets",
        "Nothing to send to: no Service in this scenario has a port. Packets go to a Service (its ClusterIP, DNS name, NodePort, load balancer or external IP) or to an Ingress or Gateway; add one with its ports.",
        "보낼 곳이 없습니다. 이 시나리오에는 포트가 있는 Service가 없습니다. 패킷은 Service(ClusterIP, DNS 이름, NodePort, 로드밸런서, external IP)나 Ingress, Gateway로 갑니다. 포트가 있는 것을 추가하세요.",
    ),
    ("empty.endpoints", "No endpoints", "엔드포인트 없음"),
    (
        "empty.rules",
        "No rules for this node",
        "이 노드에는 규칙이 없습니다",
    ),
    (
        "loading",
        "Loading the visualizer…",
        "시각화 도구를 불러오는 중…",
    ),
    (
        "error.scenario",
        "The scenario has errors; nothing can be drawn until they are fixed.",
        "시나리오에 오류가 있어 고칠 때까지 그릴 수 없습니다.",
    ),
    (
        "url.ignored",
        "The page address has {param}={value}, which is not known here, so it was ignored.",
        "페이지 주소의 {param}={value} 값은 알 수 없는 값이라 무시했습니다.",
    ),
    ("url.one-of", "Use one of: {list}.", "다음 중 하나를 쓰세요: {list}."),
    ("url.number", "Use a whole number from {n}.", "{n} 이상의 정수를 쓰세요."),
    (
        "url.number-in",
        "Use a whole number from {from} to {to}.",
        "{from}부터 {to}까지의 정수를 쓰세요.",
    ),
    (
        "url.overridden",
        "The page address has {param}={value}, but {by} opens its own scenario, so {param} was ignored.",
        "페이지 주소에 {param}={value}가 있지만 {by}가 자체 시나리오를 열기 때문에 {param}는 무시했습니다.",
    ),
    (
        "url.not-in-embed",
        "The page address has {param}={value}, but an embed shows no lessons, so it was ignored. Open the app itself (the address without embed/) for the lesson.",
        "페이지 주소에 {param}={value}가 있지만 임베드에는 레슨이 없어 무시했습니다. 레슨은 앱 자체(주소에서 embed/를 뺀 곳)에서 여세요.",
    ),
    (
        "url.step-beyond",
        "The page address has step={value}, but the packet has only {n} hops (1 to {n}), so it stops at the last one.",
        "페이지 주소에 step={value}가 있지만 패킷의 홉은 {n}개(1부터 {n})뿐이라 마지막 홉에서 멈춥니다.",
    ),
    ("diagram.client", "External client", "외부 클라이언트"),
    ("diagram.outside", "outside the cluster", "클러스터 외부"),
    ("diagram.lb", "Cloud load balancer", "클라우드 로드밸런서"),
    ("diagram.lb_assumed", "Cloud LB · assumed", "클라우드 LB · 가정"),
    ("diagram.more-services", "more Services", "Service 더 있음"),
    ("diagram.more-services.where", "in rules & lists", "규칙·목록에 있음"),
    (
        "diagram.rules.iptables",
        "iptables: KUBE-SERVICES chains",
        "iptables: KUBE-SERVICES 체인",
    ),
    (
        "diagram.rules.ipvs",
        "IPVS: kube-ipvs0 virtual servers",
        "IPVS: kube-ipvs0 가상 서버",
    ),
    (
        "diagram.rules.nftables",
        "nftables: table ip kube-proxy",
        "nftables: table ip kube-proxy",
    ),
    (
        "diagram.rules.userspace",
        "userspace: kube-proxy process (legacy)",
        "userspace: kube-proxy 프로세스 (레거시)",
    ),
    ("state.ready", "Ready", "준비됨"),
    ("state.not-ready", "NotReady", "준비 안 됨"),
    ("state.app-healthy", "app healthy", "앱 정상"),
    (
        "state.app-failing",
        "app failing readiness",
        "앱 준비성 실패 중",
    ),
    ("state.app-down", "app down", "앱 중지됨"),
    (
        "state.app-failing-liveness",
        "app failing liveness",
        "앱 활성 검사 실패 중",
    ),
    ("ep.ready", "ready", "ready"),
    ("ep.more", "+{n} more endpoints", "엔드포인트 {n}개 더"),
    ("btn.show-all", "Show all", "모두 보기"),
    ("ep.serving", "serving", "serving"),
    ("ep.terminating", "terminating", "terminating"),
    ("probe.none", "no readiness probe", "준비성 프로브 없음"),
    ("probe.last", "last probe", "마지막 프로브"),
    ("probe.restarts", "restarts: {n}", "재시작 {n}회"),
    ("probe.ok", "passed", "성공"),
    ("probe.failed", "failed", "실패"),
    ("verdict.delivered", "Delivered to", "전달됨:"),
    (
        "verdict.sees-source",
        "the Pod sees source",
        "파드가 보는 출발지",
    ),
    (
        "verdict.timed-out",
        "Timed out: the Pod does not answer",
        "시간 초과: 파드가 응답하지 않음",
    ),
    ("verdict.dropped", "Dropped", "DROP (버려짐)"),
    ("verdict.rejected", "Rejected", "REJECT (거부됨)"),
    ("verdict.accepted", "Accepted by the node", "노드가 수락함"),
    (
        "verdict.unrouted",
        "No Service matched; nobody answers this address",
        "일치하는 서비스가 없어 아무도 응답하지 않음",
    ),
    (
        "verdict.no-name",
        "DNS: no such name",
        "DNS: 해당 이름 없음",
    ),
    (
        "verdict.external-name",
        "DNS answers an ExternalName Service with a CNAME; kube-proxy has no rules for it, the connection leaves the cluster",
        "DNS가 ExternalName 서비스에 CNAME으로 응답함. kube-proxy 규칙은 없고 연결은 클러스터 밖으로 나감",
    ),
    ("verdict.in-flight", "in flight", "전송 중"),
    (
        "reason.no-endpoints",
        "the Service has no endpoints",
        "서비스에 엔드포인트가 없음",
    ),
    (
        "reason.no-local-endpoints",
        "externalTrafficPolicy Local and no endpoint on this node",
        "externalTrafficPolicy Local인데 이 노드에 엔드포인트가 없음",
    ),
    (
        "reason.source-range",
        "source not in loadBalancerSourceRanges",
        "출발지가 loadBalancerSourceRanges에 없음",
    ),
    (
        "reason.unallocated",
        "no Service has this cluster IP",
        "이 클러스터 IP를 가진 서비스가 없음",
    ),
    (
        "reason.unknown-port",
        "no Service port there",
        "해당 서비스 포트 없음",
    ),
    (
        "reason.all-failed",
        "no backend answered",
        "응답한 백엔드가 없음",
    ),
    ("reason.invalid", "invalid packet", "잘못된 패킷"),
    ("hop.dns", "DNS", "DNS"),
    ("hop.send", "Send", "전송"),
    ("hop.lb", "Load balancer → node", "로드밸런서 → 노드"),
    ("hop.arrive", "Arrives at node", "노드에 도착"),
    (
        "hop.established",
        "conntrack: established flow, rules skipped",
        "conntrack: 기존 연결, 규칙 생략",
    ),
    ("hop.rule", "Rule", "규칙"),
    ("hop.end-of-chain", "end of chain: back to the calling chain", "체인 끝: 호출한 체인으로 돌아감"),
    ("hop.masquerade", "Masquerade (SNAT)", "마스커레이드 (SNAT)"),
    ("hop.pod-network", "Pod network to", "파드 네트워크로 이동:"),
    ("hop.deliver", "Delivered", "전달됨"),
    ("hop.no-answer", "No answer", "응답 없음"),
    ("hop.drop", "DROP", "DROP"),
    ("hop.reject", "REJECT", "REJECT"),
    ("hop.reply", "Reply (NAT reversed)", "응답 (NAT 역변환)"),
    ("stage.load-balancer", "LoadBalancer", "로드밸런서"),
    ("stage.node-port", "NodePort", "NodePort"),
    ("stage.external-ip", "externalIP", "externalIP"),
    ("stage.cluster-ip", "ClusterIP", "ClusterIP"),
    ("stage.pod", "Pod", "파드"),
    ("scenario.custom", "Your YAML", "내 YAML"),
    ("label.lang", "Language", "언어"),
    ("label.theme", "Theme", "테마"),
    ("theme.auto", "As the system", "시스템 설정대로"),
    ("theme.light", "Light", "밝게"),
    ("theme.dark", "Dark", "어둡게"),
    ("btn.large-text", "Large text", "큰 글씨"),
    ("rules.node", "Node", "노드"),
    ("packet.src", "src", "출발"),
    ("packet.dst", "dst", "도착"),
    ("btn.fullscreen", "Full screen", "전체 화면"),
    ("fullscreen.refused", "The browser refused full screen.", "브라우저가 전체 화면을 거부했습니다."),
    ("share.err.empty", "The share link has no state in it; showing the default scenario.", "공유 링크에 상태가 없습니다. 기본 시나리오를 보여 줍니다."),
    ("share.err.version", "This share link is not in a format this version reads; showing the default scenario.", "이 버전이 읽을 수 없는 형식의 공유 링크입니다. 기본 시나리오를 보여 줍니다."),
    ("share.err.too-large", "This share link is too large and was refused; showing the default scenario.", "공유 링크가 너무 커서 거부했습니다. 기본 시나리오를 보여 줍니다."),
    ("share.err.damaged", "This share link is damaged or cut short; showing the default scenario.", "공유 링크가 손상되었거나 잘렸습니다. 기본 시나리오를 보여 줍니다."),
    ("share.err.invalid", "This share link holds values the app does not accept; showing the default scenario.", "공유 링크에 앱이 받을 수 없는 값이 있습니다. 기본 시나리오를 보여 줍니다."),
    ("share.warn.missing-origin", "This link's packets start from Pods its scenario does not have, so they go nowhere; the rest of the link is shown. Send from another Pod with From.", "이 링크의 패킷은 시나리오에 없는 Pod에서 출발해 어디로도 가지 않습니다. 링크의 나머지는 그대로 보여 줍니다. 보내는 곳(From)에서 다른 Pod를 고르세요."),
    ("share.err.scenario", "The scenario in this share link has errors; showing the default scenario.", "공유 링크의 시나리오에 오류가 있습니다. 기본 시나리오를 보여 줍니다."),
    ("share.err.unavailable", "The part of the app that opens share links did not load (is the connection down?); showing the default scenario.", "공유 링크를 여는 앱의 일부를 불러오지 못했습니다(연결이 끊겼나요?). 기본 시나리오를 보여 줍니다."),
    ("share.opening", "Opening the shared view…", "공유된 화면을 여는 중…"),
    ("data.loading", "Loading…", "불러오는 중…"),
    ("mode.loading", "Loading the {mode} mode…", "{mode} 모드를 불러오는 중…"),
    ("mode.failed.short", "The {mode} mode did not load", "{mode} 모드를 불러오지 못했습니다"),
    ("mode.failed", "The {mode} mode did not load (is the connection down?). The scenario and anything you typed are unchanged.", "{mode} 모드를 불러오지 못했습니다(연결이 끊겼나요?). 시나리오와 입력한 내용은 모두 그대로입니다."),
    ("data.failed", "The file could not be loaded from the server. What is on screen and anything you typed are unchanged.", "서버에서 파일을 불러오지 못했습니다. 화면과 입력한 내용은 그대로입니다."),
    ("data.retry", "Try again", "다시 시도"),
    (
        "a11y.diagram",
        "Cluster diagram: client, load balancer, nodes, Services and Pods",
        "클러스터 다이어그램: 클라이언트, 로드밸런서, 노드, 서비스, 파드",
    ),
    (
        "a11y.keys",
        "Keyboard: space plays or pauses, arrow keys step",
        "키보드: 스페이스는 재생/일시정지, 화살표 키는 단계 이동",
    ),
    // The node pipeline (learner's view).
    ("step.ipvs-virtual-server", "IPVS virtual server", "IPVS 가상 서버"),
    ("step.ipvs-real-server", "IPVS real server", "IPVS 실제 서버"),
    ("step.nft-services-map", "services map", "services 맵"),
    ("step.nft-external", "external chain", "external 체인"),
    ("step.nft-firewall", "firewall chain", "firewall 체인"),
    ("step.nft-service-chain", "service chain", "service 체인"),
    ("step.nft-endpoint-chain", "endpoint chain", "endpoint 체인"),
    ("step.kube-proxy-process", "kube-proxy process", "kube-proxy 프로세스"),
    ("step.kube-proxy-dial", "second connection", "두 번째 연결"),
    ("step.bpf-hook", "BPF hook", "BPF 훅"),
    ("step.lb-service", "services map", "services 맵"),
    ("step.lb-select", "backend pick", "백엔드 선택"),
    ("step.lb-backend", "backends map", "backends 맵"),
    ("step.lb-nat", "SNAT or DSR", "SNAT 또는 DSR"),
    ("chip.mark", "mark for SNAT", "SNAT 표시"),
    ("chip.pick", "1 of {n}: {ep}", "1/{n}: {ep}"),
    ("chip.dial", "dial", "연결"),
    ("pipeline.compared", "rules compared: {n}", "비교한 규칙: {n}개"),
    ("pipeline.rest", "{mode} at rest: no packet inside a node", "{mode} 대기 중: 노드 안에 패킷 없음"),
    ("pipeline.node", "{node}: how {mode} handles this packet", "{node}: {mode}가 이 패킷을 처리하는 과정"),
    ("pipeline.socket", "{pod}'s socket: {mode} at connect(), before any packet", "{pod}의 소켓: 패킷 전, connect()에서 {mode}"),
    ("sum.dns", "DNS answers {name} with {ip}", "DNS가 {name}을(를) {ip}(으)로 응답"),
    ("sum.send", "Sends a new connection to {dst}", "{dst}(으)로 새 연결 전송"),
    ("sum.lb", "Load balancer picks {node} ({ok} of {n} nodes healthy)", "로드밸런서가 {node} 선택 (노드 {n}개 중 {ok}개 정상)"),
    ("sum.arrive", "Arrives at {node} eth0", "{node} eth0에 도착"),
    ("sum.established", "conntrack knows this flow: straight to {ep}", "conntrack이 이 흐름을 앎: 바로 {ep}(으)로"),
    ("sum.masquerade", "Source rewritten to {src} (masquerade)", "출발지를 {src}(으)로 변경 (마스커레이드)"),
    ("sum.pod-network", "Pod network carries it to {node}", "파드 네트워크로 {node}에 전달"),
    ("sum.deliver", "Delivered to {ep}; the Pod sees source {src}", "{ep}에 전달됨; 파드가 보는 출발지 {src}"),
    ("sum.no-answer", "Nothing answers at {ep}", "{ep}에서 응답 없음"),
    ("sum.reply", "Reply goes back; conntrack reverses the NAT", "응답이 돌아감; conntrack이 NAT를 되돌림"),
    ("sum.reply-dsr", "Reply leaves {node} straight for the client (DSR)", "응답이 {node}에서 클라이언트로 곧장 감(DSR)"),
    ("sum.reply-socket", "Reply comes back; the socket restores the Service address", "응답이 돌아옴; 소켓이 Service 주소를 되돌림"),
    ("sum.jump", "{chain}: matches, jumps to {to}", "{chain}: 일치, {to}(으)로 점프"),
    ("sum.mark", "{chain}: marks the packet for SNAT", "{chain}: 패킷에 SNAT 표시"),
    ("sum.dnat", "{chain}: destination rewritten to {ep} (DNAT)", "{chain}: 목적지를 {ep}(으)로 변경 (DNAT)"),
    ("sum.redirect", "{chain}: redirected to kube-proxy's port {port}", "{chain}: kube-proxy 포트 {port}(으)로 리다이렉트"),
    ("sum.lookup", "{chain}: one lookup finds {what}", "{chain}: 한 번의 조회로 {what} 찾음"),
    ("sum.choose", "{chain}: picks {ep}, 1 of {n}", "{chain}: {n}개 중 {ep} 선택"),
    ("sum.connect-ok", "kube-proxy opens a second connection to {ep}: answered", "kube-proxy가 {ep}(으)로 두 번째 연결: 응답함"),
    ("sum.connect-failed", "kube-proxy dials {ep}: no answer, tries the next", "kube-proxy가 {ep}에 연결 시도: 응답 없음, 다음으로"),
    ("sum.accept", "{chain}: accepted", "{chain}: 허용"),
    ("sum.drop", "{chain}: dropped", "{chain}: 버림 (DROP)"),
    ("sum.reject", "{chain}: rejected", "{chain}: 거부 (REJECT)"),
    ("sum.return", "{chain}: no rule matches, back to the caller", "{chain}: 일치하는 규칙 없음, 호출한 곳으로 복귀"),
    ("sum.dsr", "{chain}: DSR with {svc}; the backend answers the client itself", "{chain}: {svc}을(를) 실어 DSR; 백엔드가 클라이언트에게 직접 응답"),
    ("group.client", "Client", "클라이언트"),
    ("group.load-balancer", "Load balancer", "로드밸런서"),
    ("group.node", "Node {node}", "노드 {node}"),
    ("group.pod", "Pod", "파드"),
    ("group.reply", "Reply", "응답"),
    ("caption.hop", "Hop {i} of {n}", "{n}단계 중 {i}단계"),
    ("caption.idle", "Press Send to follow a packet", "패킷 보내기를 눌러 패킷을 따라가 보세요"),
    ("events.raw", "rule", "규칙"),
    ("pod.controls", "Pod controls", "파드 제어"),
    ("pod.probe", "probe {k}/{n}", "프로브 {k}/{n}"),
    ("pod.liveness", "liveness {k}/{n}", "활성 {k}/{n}"),
    ("pod.restarted", "restarted", "재시작됨"),
    ("legend.packet", "packet", "패킷"),
    ("legend.delivered", "delivered", "전달됨"),
    ("legend.dropped", "dropped / rejected", "버림 / 거부"),
    ("legend.timed-out", "no answer", "응답 없음"),
    ("btn.send-one", "Send a packet", "패킷 보내기"),
    ("diagram.lb-skips", "⊘ LB skips this node: no ready {svc} Pod here (Local)", "⊘ LB가 이 노드를 건너뜀: 준비된 {svc} 파드 없음 (Local)"),
    ("event.synced", "rules synced for {svc}: {n} endpoints", "{svc} 규칙 동기화: 엔드포인트 {n}개"),
    ("events.title", "Events", "이벤트"),
    ("events.hops", "Hops", "홉"),
    ("events.empty", "No events yet. Click a Pod on the diagram to fail its readiness probe.", "아직 이벤트가 없습니다. 다이어그램에서 파드를 눌러 준비성 프로브를 실패시켜 보세요."),
    ("chip.endpoints", "endpoints {a} → {b}", "엔드포인트 {a} → {b}"),
    ("compare.title", "Compare modes: the same packet in each", "모드 비교: 같은 패킷을 각 모드로"),
    ("compare.show", "⇄ Compare modes", "⇄ 모드 비교"),
    ("compare.back", "◀ Back to the diagram", "◀ 다이어그램으로 돌아가기"),
    ("compare.empty", "Send a packet to compare how each mode handles it.", "패킷을 보내면 모드마다 어떻게 처리하는지 비교합니다."),
];

/// The full app's own words (none in the embed build).
#[cfg(feature = "full")]
const FULL: &[(&str, &str, &str)] = crate::i18n::full::TABLE;
#[cfg(not(feature = "full"))]
const FULL: &[(&str, &str, &str)] = &[];

/// Every entry of this build's tables: this one, HTTP routing's, the full
/// app's own.
pub fn entries() -> impl Iterator<Item = &'static (&'static str, &'static str, &'static str)> {
    TABLE.iter().chain(crate::i18n::http::TABLE).chain(FULL)
}

/// The text of `key` in `lang` (the key itself if unknown, so a missing
/// entry is visible rather than blank; English while the Korean words are
/// still on their way).
pub fn tr(lang: Lang, key: &'static str) -> &'static str {
    match entries().find(|(k, _, _)| *k == key) {
        Some((_, en, ko)) => match lang {
            Lang::En => en,
            Lang::Ko => korean(key, ko).unwrap_or(en),
        },
        None => key,
    }
}

/// The path of the Korean words in the site.
pub const KOREAN_FILE: &str = "data/i18n/ko.tsv";

#[cfg(feature = "split")]
static KOREAN: std::sync::OnceLock<kpv_core::util::vecmap::VecMap<&'static str, &'static str>> =
    std::sync::OnceLock::new();

#[cfg(not(feature = "split"))]
fn korean(_key: &str, compiled: &'static str) -> Option<&'static str> {
    Some(compiled)
}

#[cfg(feature = "split")]
fn korean(key: &str, _compiled: &'static str) -> Option<&'static str> {
    KOREAN.get()?.get(key).copied()
}

/// True when [`tr`] can give Korean.
pub fn korean_ready() -> bool {
    #[cfg(feature = "split")]
    {
        KOREAN.get().is_some()
    }
    #[cfg(not(feature = "split"))]
    {
        true
    }
}

/// Fetch the Korean words (once) and make [`tr`] give them; the caller
/// sets the language again so every text is drawn anew.
pub async fn load_korean() -> Result<(), crate::fetch::FetchError> {
    if korean_ready() {
        return Ok(());
    }
    let text = crate::fetch::get(KOREAN_FILE).await?;
    let entries =
        parse_tsv(&text).map_err(|e| crate::fetch::FetchError(format!("{KOREAN_FILE}: {e}")))?;
    #[cfg(feature = "split")]
    {
        // Kept for the page's life, as the compiled-in words are.
        let map = entries
            .into_iter()
            .map(|(k, v)| -> (&'static str, &'static str) {
                (Box::leak(k.into_boxed_str()), Box::leak(v.into_boxed_str()))
            })
            .collect();
        let _ = KOREAN.set(map);
    }
    #[cfg(not(feature = "split"))]
    let _ = entries;
    Ok(())
}

/// `key<TAB>text` lines, the text with `\\`, `\n` and `\t` escaped.
pub fn write_tsv<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (k, v) in entries {
        out.push_str(k);
        out.push('\t');
        for c in v.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c => out.push(c),
            }
        }
        out.push('\n');
    }
    out
}

/// The entries of a file [`write_tsv`] wrote; the first bad line's number
/// and problem otherwise.
pub fn parse_tsv(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let (k, v) = line
            .split_once('\t')
            .ok_or_else(|| format!("line {}: no tab after the key", i + 1))?;
        let mut value = String::with_capacity(v.len());
        let mut chars = v.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                value.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some('\\') => value.push('\\'),
                other => {
                    return Err(format!(
                        "line {}: unknown escape \\{}",
                        i + 1,
                        other.map(String::from).unwrap_or_default()
                    ))
                }
            }
        }
        out.push((k.to_string(), value));
    }
    Ok(out)
}

pub fn stage_key(s: kpv_core::net::trace::Stage) -> &'static str {
    use kpv_core::net::trace::Stage;
    match s {
        Stage::LoadBalancer => "stage.load-balancer",
        Stage::NodePort => "stage.node-port",
        Stage::ExternalIp => "stage.external-ip",
        Stage::ClusterIp => "stage.cluster-ip",
        Stage::Pod => "stage.pod",
    }
}

pub fn reason_key(r: DropReason) -> &'static str {
    match r {
        DropReason::NoEndpoints => "reason.no-endpoints",
        DropReason::NoLocalEndpoints => "reason.no-local-endpoints",
        DropReason::SourceRange => "reason.source-range",
        DropReason::UnallocatedClusterIp => "reason.unallocated",
        DropReason::UnknownPort => "reason.unknown-port",
        DropReason::AllBackendsFailed => "reason.all-failed",
        DropReason::Invalid => "reason.invalid",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every string literal in the crate's sources but `skip` (a file
    /// name), with its file: where the key tables' tests look for keys.
    pub(crate) fn source_literals(skip: &str) -> Vec<(std::path::PathBuf, String)> {
        let mut out = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src"
        ))];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") || path.ends_with(skip) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for lit in text.split('"').skip(1).step_by(2) {
                    out.push((path.clone(), lit.to_string()));
                }
            }
        }
        out
    }

    /// The Korean file the release build fetches is exactly the tables'
    /// Korean column. `KPV_WRITE_KO=1 cargo test -p kpv-web --lib i18n`
    /// writes it after the tables change.
    #[cfg(not(feature = "split"))]
    #[test]
    fn the_korean_file_is_the_tables_korean_column() {
        let want = write_tsv(entries().map(|(k, _, ko)| (*k, *ko)));
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/i18n/ko.tsv");
        if std::env::var_os("KPV_WRITE_KO").is_some() {
            std::fs::write(path, &want).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "assets/i18n/ko.tsv is not the tables' Korean: run KPV_WRITE_KO=1 cargo test -p kpv-web --lib i18n"
        );
        let back = parse_tsv(&have).unwrap_or_default();
        assert_eq!(back.len(), entries().count());
        for ((k, v), (tk, _, tko)) in back.iter().zip(entries()) {
            assert_eq!((k.as_str(), v.as_str()), (*tk, *tko));
        }
    }

    #[test]
    fn the_korean_file_format_round_trips_escapes_and_names_bad_lines() {
        let entries = [("a.b", "한 줄\n두 줄"), ("c", "tab\there \\ back")];
        let text = write_tsv(entries);
        assert_eq!(text.lines().count(), 2);
        let back = parse_tsv(&text).unwrap_or_default();
        let back: Vec<(&str, &str)> = back.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(back, entries);
        assert_eq!(
            parse_tsv("no tab here\n"),
            Err("line 1: no tab after the key".into())
        );
        assert_eq!(
            parse_tsv("k\tbad \\x\n"),
            Err("line 1: unknown escape \\x".into())
        );
    }

    #[test]
    fn both_languages_have_every_key_once() {
        let mut keys = BTreeSet::new();
        for (k, en, ko) in entries() {
            assert!(keys.insert(*k), "duplicate key {k}");
            assert!(!en.trim().is_empty(), "{k}: English missing");
            assert!(!ko.trim().is_empty(), "{k}: Korean missing");
        }
        assert_eq!(tr(Lang::Ko, "btn.send"), "패킷 보내기");
        assert_eq!(tr(Lang::En, "nope"), "nope");
    }

    /// Every key-like string literal in the crate's sources (`"lab.run"`,
    /// `"share.err.damaged"`) whose first part is a prefix the table uses
    /// must be in the table: a key missing from it would show raw.
    #[test]
    fn every_key_the_code_uses_is_in_the_table() {
        let keys: BTreeSet<&str> = entries().map(|(k, _, _)| *k).collect();
        let prefixes: BTreeSet<&str> = keys.iter().filter_map(|k| k.split('.').next()).collect();
        let mut missing = Vec::new();
        for (path, lit) in source_literals("i18n/mod.rs")
            .into_iter()
            .filter(|(p, _)| !p.ends_with("i18n/full.rs"))
        {
            let key_like = lit.contains('.')
                && lit
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
                && !lit.ends_with('.')
                && ![".yaml", ".txt", ".svg", ".png", ".json", ".rs"]
                    .iter()
                    .any(|x| lit.ends_with(x));
            let prefix = lit.split('.').next().unwrap_or_default();
            if key_like && prefixes.contains(prefix) && !keys.contains(lit.as_str()) {
                missing.push(format!("{}: {lit}", path.display()));
            }
        }
        assert!(
            missing.is_empty(),
            "keys used but not translated: {missing:#?}"
        );
    }
}
