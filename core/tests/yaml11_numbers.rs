//! Numbers and booleans in manifests are read as kubectl reads them (YAML 1.1
//! through go-yaml v2): `010` is octal 8, `0x1F90` is 8080, `1_000` is 1000,
//! `+12` is 12, and `yes` is true — not what a YAML 1.2 reader would say.

fn port_of(port: &str) -> Option<u16> {
    let yaml = format!(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{addresses: [{{type: InternalIP, address: 10.0.0.1}}]}}\n---\n\
         apiVersion: v1\nkind: Service\nmetadata: {{name: s}}\nspec: {{ports: [{{port: {port}}}]}}\n"
    );
    let (cluster, _) = kpv_core::Code::ALL.parse(&yaml);
    cluster
        .services
        .first()
        .and_then(|s| s.ports.first())
        .map(|p| p.port)
}

#[test]
fn service_ports_are_read_as_kubectl_reads_them() {
    for (text, want) in [
        ("010", Some(8)),
        ("0o10", Some(8)),
        ("0x1F90", Some(8080)),
        ("1_000", Some(1000)),
        ("+12", Some(12)),
        ("8080", Some(8080)),
        ("\"8080\"", None),
    ] {
        assert_eq!(port_of(text), want, "port: {text}");
    }
}

#[test]
fn yes_is_true_for_a_boolean_field() {
    let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {addresses: [{type: InternalIP, address: 10.0.0.1}]}\n---\n\
        apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {publishNotReadyAddresses: yes, ports: [{port: 80}]}\n";
    let (cluster, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    assert!(cluster
        .services
        .first()
        .is_some_and(|s| s.publish_not_ready_addresses));
}
