//! A row id as a server function's argument: a bad one is refused with a message that names the
//! field, not the parser's "invalid digit found in string".

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// The `id` argument of an admin action (a share, a hold, an alert, a data request…).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Id(pub i64);

impl From<i64> for Id {
    fn from(id: i64) -> Self {
        Id(id)
    }
}

/// The one message for a bad id, whatever form it came in.
pub const BAD_ID: &str = "`id` must be a whole number, such as 42";

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(BAD_ID)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                i64::try_from(v).map(Id).map_err(|_| E::custom(BAD_ID))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                v.trim().parse().map(Id).map_err(|_| E::custom(BAD_ID))
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_id_names_the_field() {
        assert_eq!(serde_json::from_str::<Id>("42").unwrap(), Id(42));
        assert_eq!(serde_json::from_str::<Id>("\"42\"").unwrap(), Id(42));
        for bad in ["\"abc\"", "\"4.2\"", "1.5", "true", "18446744073709551615", "\"\""] {
            let err = serde_json::from_str::<Id>(bad).unwrap_err().to_string();
            assert!(err.contains("`id` must be a whole number"), "{bad}: {err}");
        }
    }
}
