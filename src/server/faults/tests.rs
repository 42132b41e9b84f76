//! The reference server's protocol faults: names round trip, and each hook bends a
//! reply, a capability or an acknowledgement only where asked.

use super::*;

#[test]
fn names_round_trip() {
    for f in Fault::ALL {
        assert_eq!(Fault::from_name(f.name()), Some(f));
    }
    assert_eq!(Fault::from_name("nope"), None);
}

#[test]
fn replies_are_bent_only_where_asked() {
    let faults = Faults::new(&[Fault::WrongJsonrpc]);
    let list = faults.asked("tools/list", None);
    let out = faults.reply(
        &list,
        br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#.to_vec(),
    );
    assert!(String::from_utf8_lossy(&out).contains("\"1.0\""));
    let ping = faults.asked("ping", None);
    let out = faults.reply(&ping, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec());
    assert!(String::from_utf8_lossy(&out).contains("\"2.0\""));
}

#[test]
fn capabilities_flap_every_other_handshake() {
    let faults = Faults::new(&[Fault::FlappingCapabilities]);
    let init = faults.asked("initialize", None);
    let reply =
        br#"{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{},"completions":{}}}}"#;
    let caps = |bytes: Vec<u8>| -> Value {
        serde_json::from_slice::<Value>(&bytes).expect("json")["result"]["capabilities"].clone()
    };
    let first = caps(faults.reply(&init, reply.to_vec()));
    let second = caps(faults.reply(&init, reply.to_vec()));
    assert!(first.get("completions").is_some());
    assert!(second.get("completions").is_none());
}

#[test]
fn post_acks_follow_the_faults() {
    assert_eq!(Faults::new(&[]).post_ack(), None);
    let bodied = Faults::new(&[Fault::RespondToNotification]).post_ack();
    assert!(bodied.is_some_and(|(s, b)| s == 200 && !b.is_empty()));
    assert_eq!(
        Faults::new(&[Fault::NotificationStatus200]).post_ack(),
        Some((200, Vec::new()))
    );
}
