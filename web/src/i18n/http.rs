//! The words of HTTP routing in the app (the request form, the request
//! card, the routing table, the proxy's hops and pipeline steps), in English
//! and Korean. [`crate::i18n::tr`] reads this table after its own; every key
//! starts with `http.`. Never holds object names or addresses.

/// (key, English, Korean)
pub const TABLE: &[(&str, &str, &str)] = crate::i18n::words![
    ("http.target", "HTTP request via", "HTTP 요청 경유"),
    ("http.method", "Method", "메서드"),
    ("http.url", "URL", "URL"),
    ("http.headers", "Headers", "헤더"),
    ("http.headers-hint", "One Name: value per line", "한 줄에 이름: 값 하나"),
    ("http.form", "HTTP request", "HTTP 요청"),
    ("http.field.method", "Method", "메서드"),
    ("http.field.url", "URL", "URL"),
    ("http.field.header", "header line {n}", "헤더 {n}번째 줄"),
    ("http.err.at", "{field}, column {col}: {problem}", "{field}, {col}번째 글자: {problem}"),
    ("http.err.bad-method", "use letters only, such as GET or POST", "GET이나 POST처럼 영문자만 쓰세요"),
    ("http.err.no-scheme", "start with http:// or https://", "http:// 또는 https://로 시작하세요"),
    ("http.err.bad-authority", "write a host, with a port from 1 to 65535 if any", "호스트를 쓰고, 포트가 있다면 1부터 65535 사이로 쓰세요"),
    ("http.err.bad-character", "no spaces or control characters", "공백이나 제어 문자는 쓸 수 없습니다"),
    ("http.err.header-no-colon", "write Name: value (the colon is missing)", "이름: 값 형식으로 쓰세요 (콜론이 없습니다)"),
    ("http.err.header-bad-name", "a header name has no spaces", "헤더 이름에는 공백이 없어야 합니다"),
    ("http.err.bad-host", "Host takes NAME or NAME:PORT", "Host에는 이름 또는 이름:포트를 씁니다"),
    ("http.err.header-bad-value", "no control characters in a value", "값에는 제어 문자를 쓸 수 없습니다"),
    ("http.err.no-entry", "no Ingress or Gateway routes this host", "이 호스트를 라우팅하는 Ingress나 Gateway가 없습니다"),
    ("http.btn.send", "Send request", "요청 보내기"),
    ("http.step.listener", "listener", "리스너"),
    ("http.step.route", "route", "라우트"),
    ("http.step.rule", "rule", "규칙"),
    ("http.step.filters", "filters", "필터"),
    ("http.step.backend", "backend", "백엔드"),
    ("http.pipeline", "Inside proxy Pod {pod}", "프록시 파드 {pod} 내부"),
    ("http.chip.tls", "TLS ends · {cert}", "TLS 종료 · {cert}"),
    ("http.chip.tls-default", "TLS ends · controller's cert", "TLS 종료 · 컨트롤러 인증서"),
    ("http.chip.status", "answers {status}", "{status} 응답"),
    ("http.group.proxy", "Proxy Pod", "프록시 파드"),
    ("http.sum.tls", "TLS ends at the proxy (SNI {sni}, cert {cert}); listener {listener}", "프록시에서 TLS 종료 (SNI {sni}, 인증서 {cert}); 리스너 {listener}"),
    ("http.sum.tls-default", "TLS ends at the proxy (SNI {sni}, the controller's own cert); listener {listener}", "프록시에서 TLS 종료 (SNI {sni}, 컨트롤러 자체 인증서); 리스너 {listener}"),
    ("http.sum.listener", "The proxy takes the request on listener {listener}", "프록시가 리스너 {listener}에서 요청을 받음"),
    ("http.sum.route", "Host {host} selects {kind} {name}", "호스트 {host}(으)로 {kind} {name} 선택"),
    ("http.sum.rule", "Rule {rule}, match {match} fits {method} {path} ({n} compared)", "규칙 {rule}, 매치 {match}가 {method} {path}에 맞음 ({n}개 비교)"),
    ("http.sum.filters", "Filters applied: {list}", "적용된 필터: {list}"),
    ("http.sum.path", "{list} · path {from} → {to}", "{list} · 경로 {from} → {to}"),
    ("http.sum.connect", "Proxy {from} connects straight to Pod {to} ({svc})", "프록시 파드 {from}에서 파드 {to}(으)로 바로 가는 새 연결 ({svc})"),
    ("http.sum.connect-cluster-ip", "Proxy {from} connects to ClusterIP {to} ({svc}), through kube-proxy again", "프록시 파드 {from}에서 ClusterIP {to}(으)로 새 연결 ({svc}), 다시 kube-proxy를 거침"),
    ("http.sum.redirect", "The proxy answers {status} itself: go to {location}", "프록시가 직접 {status} 응답: {location}(으)로 이동"),
    ("http.sum.respond", "The proxy answers {status} itself: {reason}", "프록시가 직접 {status} 응답: {reason}"),
    ("http.listener.port", "port {port}", "포트 {port}"),
    ("http.reason.routed", "a rule matched", "규칙이 일치함"),
    ("http.reason.default-backend", "the Ingress's defaultBackend", "Ingress의 defaultBackend"),
    ("http.reason.controller-default-backend", "no rule matches: the controller's default backend", "일치하는 규칙 없음: 컨트롤러의 기본 백엔드"),
    ("http.reason.no-listener", "no listener on this port", "이 포트에 리스너 없음"),
    ("http.reason.tls-handshake-failed", "no certificate for this server name", "이 서버 이름의 인증서 없음"),
    ("http.reason.misdirected", "the Host belongs to another listener", "Host가 다른 리스너에 속함"),
    ("http.reason.no-matching-route", "no route rule matches", "일치하는 라우트 규칙 없음"),
    ("http.reason.redirect", "a RequestRedirect filter", "RequestRedirect 필터"),
    ("http.reason.cors-preflight", "a CORS filter answers the preflight", "CORS 필터가 사전 요청(preflight)에 응답함"),
    ("http.reason.https-redirect", "HTTP to a TLS host goes to HTTPS", "TLS 호스트로 가는 HTTP는 HTTPS로 보냄"),
    ("http.reason.no-backends", "the rule has no backends", "규칙에 백엔드 없음"),
    ("http.reason.invalid-backend", "the backend reference is invalid", "백엔드 참조가 잘못됨"),
    ("http.reason.service-not-found", "the backend Service does not exist", "백엔드 서비스가 없음"),
    ("http.reason.no-ready-endpoints", "the backend has no ready endpoints", "백엔드에 준비된 엔드포인트 없음"),
    ("http.reason.unsupported-match", "a regular-expression match is not evaluated", "정규 표현식 매치는 평가하지 않음"),
    ("http.reason.bad-request", "two Host headers, or a path above /", "Host 헤더가 둘이거나 경로가 / 위로 올라감"),
    ("http.card.request", "Request", "요청"),
    ("http.card.backend", "The backend gets", "백엔드가 받는 요청"),
    ("http.card.changed", "changed by the proxy", "프록시가 바꾼 것"),
    ("http.card.status", "Status {status}", "상태 {status}"),
    ("http.table.title", "Routing", "라우팅"),
    ("http.table.heading", "Routing table of {entry}, in evaluation order", "{entry}의 라우팅 테이블 (평가 순서)"),
    ("http.table.empty", "This scenario has no Ingress or Gateway.", "이 시나리오에는 Ingress나 Gateway가 없습니다."),
    ("http.table.matched", "matched", "일치"),
    ("http.load.loading", "Loading HTTP routing (Ingress, Gateway API)…", "HTTP 라우팅(Ingress, Gateway API)을 불러오는 중…"),
    ("http.load.failed", "HTTP routing (Ingress, Gateway API) could not be loaded from the server. Requests you sent are kept and are shown once it loads.", "서버에서 HTTP 라우팅(Ingress, Gateway API)을 불러오지 못했습니다. 보낸 요청은 그대로 있으며 불러온 뒤에 보입니다."),
    ("http.load.targets", "HTTP entry points: loading…", "HTTP 진입점: 불러오는 중…"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_both_languages_and_is_not_in_the_main_table() {
        let mut keys = std::collections::BTreeSet::new();
        for (k, en, ko) in TABLE {
            assert!(k.starts_with("http."), "{k}");
            assert!(keys.insert(*k), "duplicate key {k}");
            assert!(!en.trim().is_empty() && !ko.trim().is_empty(), "{k}");
            assert!(
                crate::i18n::TABLE.iter().all(|(m, _, _)| m != k),
                "{k} is in both tables"
            );
            // Korean reads as Korean: it has Hangul unless it is a name.
            if !["http.url", "http.field.url"].contains(k) {
                assert!(ko.chars().any(|c| ('가'..='힣').contains(&c)), "{k}: {ko}");
            }
        }
    }

    /// Every `http.` key the crate's sources use is in this table.
    #[test]
    fn every_http_key_the_code_uses_is_here() {
        let keys: std::collections::BTreeSet<&str> = TABLE.iter().map(|(k, _, _)| *k).collect();
        let mut missing = Vec::new();
        for (path, lit) in crate::i18n::tests::source_literals("i18n/http.rs") {
            let key_like = lit.starts_with("http.")
                && lit.len() > 5
                && lit
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '.' || c == '-');
            if key_like && !keys.contains(lit.as_str()) {
                missing.push(format!("{}: {lit}", path.display()));
            }
        }
        assert!(missing.is_empty(), "{missing:#?}");
    }
}
