//! Building the message (lettre picks the transfer encoding and encodes
//! non-ASCII headers) and one SMTP session: `EHLO localhost`, STARTTLS or
//! implicit TLS as asked, `AUTH PLAIN` over TLS only, `MAIL`, `RCPT` for
//! `to` and each `cc`, `DATA` (dot-stuffed), `QUIT`.

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, Mailboxes, Message, SinglePart};
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use lettre::{SmtpTransport, Transport};

use super::{failed, Prepared, Security, SmtpError, MAX_MESSAGE, TIMEOUT};

fn mailbox(field: &str, text: &str) -> Result<Mailbox, SmtpError> {
    text.parse()
        .map_err(|e| failed(format!("invalid {field} address {text:?}: {e}")))
}

fn mailboxes(field: &str, text: &str) -> Result<Vec<Mailbox>, SmtpError> {
    let list: Mailboxes = text
        .parse()
        .map_err(|e| failed(format!("invalid {field} address {text:?}: {e}")))?;
    Ok(list.into_iter().collect())
}

fn message(p: &Prepared) -> Result<Message, SmtpError> {
    let mut builder = Message::builder()
        .from(mailbox("from", &p.from)?)
        .subject(p.subject.clone());
    for to in mailboxes("to", &p.to)? {
        builder = builder.to(to);
    }
    for cc in &p.cc {
        for mb in mailboxes("cc", cc)? {
            builder = builder.cc(mb);
        }
    }
    if let Some(reply_to) = &p.reply_to {
        builder = builder.reply_to(mailbox("reply_to", reply_to)?);
    }
    let content_type = ContentType::parse(&p.content_type)
        .map_err(|e| failed(format!("invalid content_type {:?}: {e}", p.content_type)))?;
    let part = SinglePart::builder()
        .header(content_type)
        .body(p.body.clone());
    builder
        .singlepart(part)
        .map_err(|e| failed(format!("cannot build the message: {e}")))
}

pub(super) fn send(p: Prepared) -> Result<(), SmtpError> {
    let msg = message(&p)?;
    let size = msg.formatted().len();
    if size > MAX_MESSAGE {
        return Err(failed(format!(
            "the message is {size} bytes; the limit is {MAX_MESSAGE}"
        )));
    }
    let tls = match p.security {
        Security::Plain => Tls::None,
        Security::StartTls | Security::Implicit => {
            let params = TlsParameters::new(p.host.clone())
                .map_err(|e| failed(format!("TLS setup: {e}")))?;
            if p.security == Security::StartTls {
                Tls::Required(params)
            } else {
                Tls::Wrapper(params)
            }
        }
    };
    let mut transport = SmtpTransport::builder_dangerous(p.host.as_str())
        .port(p.port)
        .tls(tls)
        .timeout(Some(TIMEOUT))
        .hello_name(ClientId::Domain("localhost".into()));
    if let Some((user, pass)) = &p.credentials {
        transport = transport
            .credentials(Credentials::new(user.clone(), pass.clone()))
            .authentication(vec![Mechanism::Plain]);
    }
    transport
        .build()
        .send(&msg)
        .map(drop)
        .map_err(|e| failed(describe(&e, &p)))
}

/// lettre's error with its causes, and where it was talking to.
fn describe(e: &lettre::transport::smtp::Error, p: &Prepared) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    format!("{text} ({}:{})", p.host, p.port)
}

#[cfg(test)]
pub(super) fn message_for_test(p: &Prepared) -> Vec<u8> {
    message(p).map(|m| m.formatted()).unwrap_or_default()
}
