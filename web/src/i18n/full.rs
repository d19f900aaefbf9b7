//! The words only the full app's own parts use (the editor, the labs, the
//! lessons, the parts loaded on first use), in English and Korean. The
//! embed build has none of those parts, so it carries none of these words;
//! [`crate::i18n::tr`] reads this table after the others. A test keeps every
//! key here used by those parts only.

/// (key, English, Korean)
pub const TABLE: &[(&str, &str, &str)] = crate::i18n::words![
    ("label.seed", "Seed", "시드"),
    ("panel.rules", "Node rules", "노드 규칙"),
    ("rules.compared", "rules compared", "비교한 규칙 수"),
    ("maglev.title", "Maglev lookup table: each backend's share of the slots", "Maglev 조회 테이블: 백엔드별 슬롯 몫"),
    ("maglev.frontend", "Frontend", "프런트엔드"),
    ("maglev.sum", "{filled} of M = {m} slots name a backend; a connection's hash picks the slot", "M = {m}개 슬롯 중 {filled}개가 백엔드를 가리킴; 연결의 해시가 슬롯을 고름"),
    ("dns.tab", "DNS", "DNS"),
    ("dns.intro", "Looked up as this Pod's resolver does (its search list and ndots), answered as CoreDNS answers:", "이 Pod의 리졸버가 하듯(search 목록과 ndots) 조회하고, CoreDNS가 하듯 답합니다:"),
    ("dns.name", "Name", "이름"),
    ("dns.type", "Type", "유형"),
    ("a11y.keys-full", "Keyboard: S sends, space plays or pauses, arrow keys step, Home and End go to the first and last hop, F is full screen, ? lists the keys", "키보드: S는 보내기, 스페이스는 재생/일시정지, 화살표 키는 단계 이동, Home과 End는 첫/마지막 홉, F는 전체 화면, ?는 키 목록"),
    ("btn.embed", "Embed code", "임베드 코드"),
    ("btn.export-png", "Diagram as PNG", "다이어그램 PNG"),
    ("btn.export-rules", "Export node rules", "노드 규칙 내보내기"),
    ("btn.export-svg", "Diagram as SVG", "다이어그램 SVG"),
    ("btn.export-transcript", "Export trace transcript", "추적 기록 내보내기"),
    ("btn.export-yaml", "Export scenario YAML", "시나리오 YAML 내보내기"),
    ("btn.share", "Share link", "공유 링크"),
    ("embed.code", "Embed code", "임베드 코드"),
    ("embed.copied", "Embed code copied: paste it into a documentation page.", "임베드 코드를 복사했습니다. 문서 페이지에 붙여 넣으세요."),
    ("export.failed", "The diagram could not be exported.", "다이어그램을 내보낼 수 없습니다."),
    ("export.png-failed", "The PNG could not be made (this page's Content-Security-Policy may forbid blob: images); the SVG export still works.", "PNG를 만들 수 없습니다(이 페이지의 Content-Security-Policy가 blob: 이미지를 막았을 수 있습니다). SVG 내보내기는 됩니다."),
    ("share.copied", "Link copied to the clipboard (and shown below). Opening it shows exactly this view.", "링크를 클립보드에 복사했습니다(아래에도 있습니다). 열면 지금 화면이 그대로 나옵니다."),
    ("share.url", "Share link", "공유 링크"),
    ("share.no-fit.scenario", "No link offered: the scenario text is larger than a share link carries (1 MiB). Export the YAML instead and share the file.", "링크를 만들지 않았습니다. 시나리오가 공유 링크에 담을 수 있는 크기(1 MiB)보다 큽니다. 대신 YAML을 내보내 파일로 공유하세요."),
    ("share.no-fit.packets", "No link offered: this session has more packets or app changes than a share link carries (10,000). Reset and send fewer, or export the YAML instead.", "링크를 만들지 않았습니다. 이 세션의 패킷이나 앱 변경이 공유 링크에 담을 수 있는 수(10,000)보다 많습니다. 초기화하고 더 적게 보내거나, 대신 YAML을 내보내세요."),
    ("share.no-fit.size", "No link offered: this view would make a link longer than the app opens. Export the YAML instead, or reset the packets and share again.", "링크를 만들지 않았습니다. 이 화면은 앱이 열 수 있는 길이보다 긴 링크가 됩니다. 대신 YAML을 내보내거나, 패킷을 초기화하고 다시 공유하세요."),
    ("share.no-fit.other", "No link offered: this view cannot be carried by a link the app opens the same way. Export the YAML instead.", "링크를 만들지 않았습니다. 이 화면은 앱이 똑같이 열 수 있는 링크로 만들 수 없습니다. 대신 YAML을 내보내세요."),
    (
        "diagram.lb_assumed_why",
        "The Service's status has no address: kpv assumes a cloud load balancer gave it one from {range} (a loadBalancerClass keeps it pending)",
        "Service의 status에 주소가 없어, 클라우드 로드밸런서가 {range}에서 주소를 주었다고 가정합니다 (loadBalancerClass를 쓰면 pending으로 남습니다)",
    ),
    ("keys.title", "Keys", "키"),
    ("keys.send", "send a packet", "패킷 보내기"),
    ("keys.play", "play or pause", "재생/일시정지"),
    ("keys.step", "step back or forward one hop", "한 홉 뒤로/앞으로"),
    ("keys.ends", "first or last hop", "첫 홉/마지막 홉"),
    ("keys.full", "full screen", "전체 화면"),
    ("keys.help", "show or hide this list", "이 목록 보이기/숨기기"),
    ("sched.rr", "rr · round robin", "rr · 라운드 로빈"),
    ("sched.wrr", "wrr · weighted round robin", "wrr · 가중 라운드 로빈"),
    ("sched.lc", "lc · least connection", "lc · 최소 연결"),
    ("sched.wlc", "wlc · weighted least connection", "wlc · 가중 최소 연결"),
    ("sched.sh", "sh · source hashing", "sh · 출발지 해싱"),
    ("sched.dh", "dh · destination hashing", "dh · 목적지 해싱"),
    ("sched.sed", "sed · shortest expected delay", "sed · 최단 예상 지연"),
    ("sched.nq", "nq · never queue", "nq · 대기 없음"),
    ("sched.mh", "mh · Maglev hashing", "mh · Maglev 해싱"),
    ("sched.line.rr", "IPVS rr: each new connection goes to the next real server in turn.", "IPVS rr: 새 연결마다 다음 real server로 차례대로 보냅니다."),
    ("sched.line.wrr", "IPVS wrr: in turn, a higher weight more often; kube-proxy gives every endpoint weight 1, so it spreads as rr.", "IPVS wrr: 가중치가 클수록 더 자주 차례가 옵니다. kube-proxy는 모든 엔드포인트에 가중치 1을 주므로 rr처럼 나뉩니다."),
    ("sched.line.lc", "IPVS lc: the server with the least load, an active connection counting 256 closed ones.", "IPVS lc: 부하가 가장 적은 서버로 보냅니다. 활성 연결 하나를 닫힌 연결 256개로 셉니다."),
    ("sched.line.wlc", "IPVS wlc: as lc, each server's load divided by its weight.", "IPVS wlc: lc와 같되, 서버마다 부하를 가중치로 나눕니다."),
    ("sched.line.sh", "IPVS sh: a hash of the client's address picks the server, so one client always reaches the same Pod.", "IPVS sh: 클라이언트 주소의 해시로 서버를 고르므로, 한 클라이언트는 늘 같은 Pod에 닿습니다."),
    ("sched.line.dh", "IPVS dh: a hash of the destination address picks the server, so one Service address always reaches the same Pod.", "IPVS dh: 목적지 주소의 해시로 서버를 고르므로, 한 Service 주소는 늘 같은 Pod에 닿습니다."),
    ("sched.line.sed", "IPVS sed: least (active connections + 1) / weight. Closed connections do not count: a burst of short connections leaves every server at 0, and the first one wins every tie.", "IPVS sed: (활성 연결 + 1) / 가중치가 가장 작은 서버. 닫힌 연결은 세지 않으므로, 짧은 연결이 이어지면 모든 서버가 0으로 같아 매번 첫 서버가 고릅니다."),
    ("sched.line.nq", "IPVS nq: an idle server (no active connection) at once, else as sed. Short connections leave every server idle, so the first one gets them all.", "IPVS nq: 활성 연결이 없는 서버를 바로 고르고, 없으면 sed처럼 고릅니다. 짧은 연결은 모든 서버를 비워 두므로 첫 서버가 모두 받습니다."),
    ("sched.line.mh", "IPVS mh: Maglev hashing; the client's address and port pick a slot of a 4093-slot table filled from each server's permutation.", "IPVS mh: Maglev 해싱. 클라이언트 주소와 포트가 4093칸 표의 칸을 고르며, 표는 서버마다의 순열로 채웁니다."),
    ("why.pods", "Why: Service {svc} selects {n} Pod(s), none a ready endpoint", "이유: Service {svc}가 고르는 Pod {n}개 중 준비된 엔드포인트가 없습니다"),
    ("why.no-pod", "Why: the selector {selector} of Service {svc} matches no Pod in namespace {ns}", "이유: Service {svc}의 셀렉터 {selector}와 맞는 Pod가 네임스페이스 {ns}에 없습니다"),
    ("why.no-selector", "Why: Service {svc} has no selector and no EndpointSlice names it", "이유: Service {svc}에는 셀렉터가 없고, 이 Service를 가리키는 EndpointSlice도 없습니다"),
    ("why.not-scheduled", "not scheduled to any node", "어느 노드에도 배치되지 않았습니다"),
    ("why.finished", "finished: it holds no address", "종료되어 주소가 없습니다"),
    ("why.terminating", "terminating: it leaves the endpoints", "종료 중이라 엔드포인트에서 빠집니다"),
    ("why.initial-delay", "not Ready yet: its first readiness probe runs at t = {t} s (initialDelaySeconds)", "아직 준비되지 않음: 첫 readiness 프로브가 t = {t}초에 실행됩니다 (initialDelaySeconds)"),
    ("why.app-down", "not Ready: its app is down, every probe fails", "준비되지 않음: 앱이 멈춰 모든 프로브가 실패합니다"),
    ("why.probe-failing", "not Ready: its readiness probe fails", "준비되지 않음: readiness 프로브가 실패합니다"),
    ("why.recovering", "not Ready yet: its app answers again; Ready after successThreshold passing probes", "아직 준비되지 않음: 앱이 다시 응답하며, successThreshold만큼 프로브가 성공하면 준비됩니다"),
    ("why.probe-port", "never Ready: its readiness probe names port {port}, which its container does not declare", "준비될 수 없음: readiness 프로브의 포트 {port}를 컨테이너가 선언하지 않았습니다"),
    ("why.reported", "not Ready: its status has condition Ready False", "준비되지 않음: status의 Ready 조건이 False입니다"),
    ("why.port-missing", "Ready, but no container declares the Service's targetPort {port}", "준비됐지만 Service의 targetPort {port}를 선언한 컨테이너가 없습니다"),
    ("why.not-synced", "Ready: the EndpointSlice controller and kube-proxy have not caught up yet", "준비됨: EndpointSlice 컨트롤러와 kube-proxy가 아직 반영하지 않았습니다"),
    ("why.from", "; kube-proxy's rules have it from t = {t} s", "; kube-proxy 규칙에는 t = {t}초부터 들어갑니다"),
    ("panel.editor", "Your manifests (YAML)", "내 매니페스트 (YAML)"),
    ("editor.hint", "Paste Services, EndpointSlices, Pods, Deployments, Nodes — several documents, or the kind: List that kubectl get -o yaml prints. Everything stays in this browser.", "Service, EndpointSlice, Pod, Deployment, Node를 붙여 넣으세요. 여러 문서나 kubectl get -o yaml이 출력하는 kind: List 모두 됩니다. 모든 내용은 이 브라우저 안에만 있습니다."),
    ("btn.apply", "Apply", "적용"),
    ("btn.load-current", "Load current scenario", "현재 시나리오 불러오기"),
    ("editor.ok", "No errors", "오류 없음"),
    ("editor.errors", "errors: the diagram keeps showing the last valid scenario", "개의 오류: 다이어그램은 마지막으로 유효했던 시나리오를 계속 보여 줍니다"),
    ("editor.line", "line", "줄"),
    ("editor.column", "column", "열"),
    ("editor.stored-bad", "The saved editor text could not be read ({reason}). It is kept, not overwritten, until you choose: download it first, or replace it with this editor's text.", "저장된 편집기 내용을 읽을 수 없습니다({reason}). 선택할 때까지 덮어쓰지 않고 그대로 둡니다. 먼저 내려받거나, 이 편집기의 내용으로 바꾸세요."),
    ("editor.stored-download", "Download it", "내려받기"),
    ("editor.stored-replace", "Replace it with this editor's text", "이 편집기의 내용으로 바꾸기"),
    ("editor.held", "Not saved yet: choose above what happens to the saved text.", "아직 저장하지 않았습니다. 저장된 내용을 어떻게 할지 위에서 고르세요."),
    ("editor.storage-off", "The browser's storage is turned off for this page: the editor's text is not kept across reloads. Export it to keep it.", "이 페이지에서는 브라우저 저장소가 꺼져 있어 새로 고침하면 편집기 내용이 남지 않습니다. 보관하려면 내보내세요."),
    ("editor.conflict", "Another tab saved a different text ({n} lines) for this editor. This tab saves nothing until you choose; the text you do not pick can be restored.", "다른 탭이 이 편집기에 다른 내용({n}줄)을 저장했습니다. 고를 때까지 이 탭은 저장하지 않으며, 고르지 않은 내용은 되돌릴 수 있습니다."),
    ("editor.conflict.theirs", "Use the other tab's text", "다른 탭의 내용 쓰기"),
    ("editor.conflict.mine", "Keep this tab's text", "이 탭의 내용 유지"),
    ("editor.restore-what", "Restore brings back the text you wrote yourself ({n} lines, starting “{first}”); a text the app loaded (the current scenario, a file) can be loaded again.", "되돌리기는 직접 쓴 내용({n}줄, “{first}”로 시작)을 다시 가져옵니다. 앱이 불러온 내용(현재 시나리오, 파일)은 다시 불러올 수 있습니다."),
    ("editor.pending", "Checking when you pause typing…", "입력을 멈추면 검사합니다…"),
    ("editor.pending-large", "Large text ({size}): checked when you press Check or Apply, so typing stays quick.", "큰 내용({size})은 입력이 느려지지 않도록 검사나 적용을 누를 때 검사합니다."),
    ("editor.busy-check", "Checking {size}…", "{size} 검사 중…"),
    ("editor.busy-apply", "Checking and applying {size}…", "{size} 검사하고 적용하는 중…"),
    ("editor.warnings", "warnings", "개의 경고"),
    ("editor.more", "… and {n} more (the first 100 of each are listed)", "… 그리고 {n}개 더 (종류마다 처음 100개만 보여 줍니다)"),
    ("btn.check", "Check", "검사"),
    ("editor.applied", "Applied", "적용됨"),
    ("editor.file-too-large", "the file is too large", "파일이 너무 큽니다"),
    ("editor.file-not-utf8", "the file is not UTF-8 text", "파일이 UTF-8 텍스트가 아닙니다"),
    ("editor.byte", "at byte", "바이트 위치"),
    ("editor.unsaved", "This text is too large for the browser's storage: it is not saved across reloads. Export it to keep it.", "이 내용은 브라우저 저장소에 비해 너무 커서 새로 고침하면 남지 않습니다. 보관하려면 내보내세요."),
    ("editor.file-unreadable", "the file could not be read", "파일을 읽을 수 없습니다"),
    ("btn.open-file", "Open a file…", "파일 열기…"),
    ("btn.restore-text", "Restore my text", "내가 쓴 내용 되돌리기"),
    ("lab.lb.title", "Load-balancing lab", "로드밸런싱 실습"),
    ("lab.lb.hint", "Send N new connections to the chosen destination with the current mode and scheduler, and count where each lands. The mark on each bar is what theory expects.", "현재 모드와 스케줄러로 선택한 목적지에 새 연결 N개를 보내고 어디에 도착하는지 셉니다. 막대의 표시는 이론상 기대값입니다."),
    ("lab.n", "Connections", "연결 수"),
    ("lab.long-lived", "Keep connections open", "연결 유지"),
    ("lab.run", "Run", "실행"),
    ("lab.stop", "Stop", "중지"),
    ("lab.timed-out", "timed out", "시간 초과"),
    ("lab.expect.random", "each endpoint is picked at random, so each share tends to 1/n", "엔드포인트를 무작위로 고르므로 각 몫은 1/n에 가까워집니다"),
    ("lab.expect.rr", "endpoints are taken in turn, so the counts are exactly equal every n connections", "엔드포인트를 차례로 고르므로 n개 연결마다 수가 정확히 같습니다"),
    ("lab.expect.count", "the endpoint with the fewest active connections wins, so counts stay within one of each other when connections stay open", "활성 연결이 가장 적은 엔드포인트가 선택되므로, 연결을 유지하면 수가 서로 하나 이내로 유지됩니다"),
    ("lab.expect.hash", "the scheduler hashes the addresses and one client's address never changes, so every connection lands on one endpoint", "스케줄러가 주소를 해시하고 한 클라이언트의 주소는 바뀌지 않으므로 모든 연결이 한 엔드포인트로 갑니다"),
    ("lab.expect.affinity", "sessionAffinity: ClientIP sends every connection of one client to the endpoint it first reached", "sessionAffinity: ClientIP는 한 클라이언트의 모든 연결을 처음 도착한 엔드포인트로 보냅니다"),
    ("lab.expect.nothing", "no endpoint can be reached", "도달할 수 있는 엔드포인트가 없습니다"),
    ("lab.scale.title", "Scaling lab", "확장성 실습"),
    ("lab.scale.show", "↗ Scaling lab", "↗ 확장성 실습"),
    ("lab.scale.hint", "Generates clusters of 10 to 10,000 Services, compiles each mode's real ruleset in this browser, and counts the rules a new connection to the last Service is compared against: iptables walks a list (O(n)), IPVS and nftables look up a hash or map (O(1)).", "Service 10개부터 10,000개까지의 클러스터를 만들어 이 브라우저에서 각 모드의 실제 규칙을 컴파일하고, 마지막 Service로 가는 새 연결이 비교하는 규칙 수를 셉니다. iptables는 목록을 차례로 훑고(O(n)), IPVS와 nftables는 해시나 맵을 조회합니다(O(1))."),
    ("lab.per-service", "Endpoints per Service", "Service당 엔드포인트"),
    ("lab.compared", "Rules compared (first → last Service)", "비교한 규칙 수 (첫 → 마지막 Service)"),
    ("lab.ruleset", "Ruleset size (lines)", "규칙 집합 크기 (줄)"),
    ("lab.services", "Services", "Service 수"),
    ("lab.time", "Time here", "여기서 걸린 시간"),
    ("lesson.title", "Lesson", "수업"),
    ("lesson.none", "— no lesson —", "— 수업 없음 —"),
    ("lesson.step", "Step", "단계"),
    ("lesson.check", "Check my answer", "답 확인"),
    ("lesson.right", "Right! Watch the packets to see why.", "정답입니다! 패킷을 보며 이유를 확인하세요."),
    ("lesson.wrong", "Not this time. The answer:", "아쉽네요. 정답:"),
    ("lesson.play", "Play this step", "이 단계 재생"),
    ("lesson.prev", "Previous", "이전"),
    ("lesson.next", "Next", "다음"),
    ("lesson.close", "Close the lesson", "수업 닫기"),
    ("lesson.settled", "Settled at hop {i}:", "{i}번째 홉에서 결정됩니다:"),
    ("lazy.loading", "Loading this part…", "이 부분을 불러오는 중…"),
    ("lazy.failed", "This part could not be loaded from the server. Everything else, and your editor text, is unchanged.", "이 부분을 서버에서 불러오지 못했습니다. 나머지 화면과 편집기의 내용은 그대로입니다."),
    ("lazy.exports", "Downloads and sharing", "내려받기와 공유"),
];

#[cfg(test)]
mod tests {
    use super::TABLE;

    /// The files of the parts only the full app has (cfg'd on `full`).
    const FULL_ONLY: &[&str] = &[
        "components/dns.rs",
        "components/editor/file.rs",
        "components/editor/mod.rs",
        "components/editor/model.rs",
        "components/exports.rs",
        "components/keys.rs",
        "components/labs.rs",
        "components/lessons.rs",
        "components/maglev.rs",
        "components/rules.rs",
        "components/textarea.rs",
        "components/textwindow.rs",
        "components/undo.rs",
        "download.rs",
        "export.rs",
        "lazy.rs",
        "lessons.rs",
        "why.rs",
        "work.rs",
    ];

    /// Each key here is used, and only by the full app's own parts: a key
    /// the embed's code asks for must be in a table the embed has.
    #[test]
    fn every_key_is_used_by_the_full_apps_parts_only() {
        let literals = crate::i18n::tests::source_literals("i18n/full.rs");
        for (k, _, _) in TABLE {
            let users: Vec<&std::path::PathBuf> = literals
                .iter()
                .filter(|(_, lit)| lit == k)
                .map(|(p, _)| p)
                .collect();
            assert!(!users.is_empty(), "{k} is not used");
            for p in users {
                assert!(
                    FULL_ONLY.iter().any(|f| p.ends_with(f)),
                    "{k} is used by {}, which the embed has: move it to i18n.rs",
                    p.display()
                );
            }
        }
    }
}
