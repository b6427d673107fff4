//! What kind of failure an error is, for callers that branch on it (the
//! Python package raises `FileNotFoundError`, `ConnectionError`,
//! `PermissionError` or `ValueError` subclasses); the text stays the CLI's.

use std::fmt;

/// A command line clap refused, with clap's message.
#[derive(Debug)]
pub struct Usage(pub String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.strip_prefix("error: ").unwrap_or(&self.0))
    }
}

impl std::error::Error for Usage {}

impl From<clap::Error> for Usage {
    fn from(e: clap::Error) -> Usage {
        Usage(e.render().to_string().trim_end().to_string())
    }
}

/// A value outside its limits, said with the field it came from.
#[derive(Debug)]
pub struct Invalid(pub String);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}

/// A coordinator's refusal: its gRPC code kept for [`Kind`], its message
/// (and a hint) for people.
#[derive(Debug)]
pub struct Refused {
    pub code: tonic::Code,
    pub message: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refused {}

/// The kinds a caller may branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file, sweep or other named thing that is not there.
    NotFound,
    /// No coordinator answered at the address.
    Unreachable,
    /// The coordinator refused the token.
    Unauthenticated,
    /// Arguments, a spec or a value out of its limits.
    Invalid,
    /// Anything else.
    Other,
}

/// The kind of `e`, from the first cause in its chain that tells.
pub fn kind(e: &anyhow::Error) -> Kind {
    for cause in e.chain() {
        if cause.is::<Usage>() || cause.is::<Invalid>() || cause.is::<tour::Error>() {
            return Kind::Invalid;
        }
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return match refused.code {
                tonic::Code::Unauthenticated | tonic::Code::PermissionDenied => Kind::Unauthenticated,
                tonic::Code::NotFound => Kind::NotFound,
                tonic::Code::InvalidArgument | tonic::Code::OutOfRange | tonic::Code::FailedPrecondition => {
                    Kind::Invalid
                }
                tonic::Code::Unavailable => Kind::Unreachable,
                _ => Kind::Other,
            };
        }
        if cause.is::<tonic::transport::Error>() {
            return Kind::Unreachable;
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::NotFound {
                return Kind::NotFound;
            }
        }
        if let Some(e) = cause.downcast_ref::<ksweep_coordinator::Error>() {
            return match e {
                ksweep_coordinator::Error::SweepNotFound(_) | ksweep_coordinator::Error::WorkerNotFound(_) => {
                    Kind::NotFound
                }
                ksweep_coordinator::Error::Spec(_) => Kind::Invalid,
                _ => Kind::Other,
            };
        }
        if cause.is::<sweep::SpecError>() {
            return Kind::Invalid;
        }
    }
    Kind::Other
}

/// A missing file as an error of kind [`Kind::NotFound`]: `FLAG: PATH does
/// not exist`.
pub fn missing(flag: &str, path: &std::path::Path) -> anyhow::Error {
    let e = std::io::Error::new(std::io::ErrorKind::NotFound, format!("{} does not exist", path.display()));
    anyhow::Error::new(e).context(flag.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_the_first_cause_that_tells() {
        let missing = missing("--db", std::path::Path::new("/no/such.db"));
        assert_eq!(kind(&missing), Kind::NotFound);
        assert_eq!(crate::error_text(&missing), "--db: /no/such.db does not exist");
        let refused = anyhow::Error::new(Refused { code: tonic::Code::Unauthenticated, message: "bad".into() });
        assert_eq!(kind(&refused.context("status")), Kind::Unauthenticated);
        assert_eq!(kind(&Usage("error: unexpected argument".into()).into()), Kind::Invalid);
        assert_eq!(Usage("error: unexpected argument".into()).to_string(), "unexpected argument");
        assert_eq!(kind(&anyhow::anyhow!("something")), Kind::Other);
    }
}
