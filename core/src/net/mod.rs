//! What the cluster does with a packet, bottom up: the controllers that
//! turn Pods and probes into EndpointSlices ([`controller`]), kube-proxy's
//! mode-independent view of them ([`proxy`]), each mode's rules
//! ([`modes`]), cluster DNS ([`dns`]), and a packet's whole path across
//! client, load balancer, nodes and Pods ([`trace`]), and the cause behind
//! a Service without endpoints ([`why`]).

pub mod controller;
pub mod dns;
pub mod modes;
pub mod proxy;
pub mod trace;
pub mod why;
