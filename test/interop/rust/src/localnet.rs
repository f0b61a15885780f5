//! The embedded localnet's own JSON-RPC (not the gateway): its control methods (`localnet_setFaults`) and the
//! look-ups a check must not ask the gateway. One POST over a plain TCP connection, so the client needs no HTTP or
//! JSON crate for the few calls it makes.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Calls `method` with `params` (JSON text of the array) and returns the body's `result` text.
pub fn call(url: &str, method: &str, params: &str) -> Result<String, String> {
    let host = url.strip_prefix("http://").ok_or_else(|| format!("{url} is not http://host:port"))?.trim_end_matches('/');
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
    let mut stream = TcpStream::connect(host).map_err(|e| format!("{method}: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(|e| e.to_string())?;
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).map_err(|e| format!("{method}: {e}"))?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).map_err(|e| format!("{method}: {e}"))?;
    let (head, text) = answer.split_once("\r\n\r\n").ok_or_else(|| format!("{method}: no HTTP body"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!("{method}: {}", head.lines().next().unwrap_or("")));
    }
    // A chunked body is not expected from the localnet's JSON-RPC (it sets Content-Length); the JSON is searched.
    if text.contains(r#""error":"#) {
        return Err(format!("{method}: {text}"));
    }
    let result = text.split_once(r#""result":"#).ok_or_else(|| format!("{method}: no result in {text}"))?.1;
    Ok(result.to_string())
}

/// Whether the localnet executed `signature` (any commitment, history searched).
pub fn on_chain(url: &str, signature: &str) -> Result<bool, String> {
    let result = call(url, "getSignatureStatuses", &format!(r#"[["{signature}"],{{"searchTransactionHistory":true}}]"#))?;
    Ok(!result.contains(r#""value":[null]"#))
}
