//! Fixed-window rate limits whose counters live in PostgreSQL, so every instance shares them.

use std::net::{IpAddr, Ipv6Addr};
use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::PgPool;

/// A named limit: at most `max` hits per `window` per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub name: &'static str,
    pub max: u32,
    pub window: Duration,
}

/// The outcome of counting one hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    Limited { retry_after_secs: u64 },
}

/// The network a client is counted by: an IPv4 address as it is, an IPv6 address cut to its
/// first `ipv6_prefix` bits (one /64 is one subscriber's, and holds 2^64 addresses). An
/// IPv4-mapped IPv6 address is its IPv4 address.
pub fn client_network(ip: IpAddr, ipv6_prefix: u8) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let bits = u32::from(ipv6_prefix.min(128));
                let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                format!("{}/{bits}", Ipv6Addr::from(u128::from(v6) & mask))
            }
        },
    }
}

/// The counter key: a hash of the limit's name and the (already keyed) client.
pub fn bucket(limit: &Limit, client: &str) -> String {
    let digest = Sha256::digest(format!("{}\0{}", limit.name, client).as_bytes());
    hex::encode(&digest[..16])
}

/// Counts one hit for `client` and says whether it is within the limit. One upsert: concurrent
/// hits from several instances are counted exactly. The window is cut from the database clock,
/// so every instance counts into the same window whatever its own clock says.
pub async fn hit(pool: &PgPool, limit: &Limit, client: &str) -> Result<Decision, sqlx::Error> {
    let window = limit.window.as_secs().max(1) as i64;
    let row = sqlx::query!(
        r#"with t as (select extract(epoch from clock_timestamp())::bigint as now_s)
           insert into rate_limit_counters (bucket, window_start, hits)
           select $1, to_timestamp(now_s - mod(now_s, $2)), 1 from t
           on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + 1
           returning hits, (extract(epoch from window_start)::bigint + $2
                            - extract(epoch from clock_timestamp())::bigint) as "retry_after!""#,
        bucket(limit, client),
        window,
    )
    .fetch_one(pool)
    .await?;
    if row.hits as u32 > limit.max {
        metrics::counter!("ebb_rate_limit_refusals_total", "limit" => limit.name).increment(1);
        Ok(Decision::Limited { retry_after_secs: row.retry_after.max(1) as u64 })
    } else {
        Ok(Decision::Allowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(ip: &str, prefix: u8) -> String {
        client_network(ip.parse().unwrap(), prefix)
    }

    #[test]
    fn an_ipv6_client_is_its_prefix_and_an_ipv4_client_its_address() {
        assert_eq!(net("2001:db8:1:2:aaaa::1", 64), net("2001:db8:1:2:ffff:ffff:ffff:ffff", 64));
        assert_eq!(net("2001:db8:1:2::1", 64), "2001:db8:1:2::/64");
        assert_ne!(net("2001:db8:1:2::1", 64), net("2001:db8:1:3::1", 64));
        assert_eq!(net("2001:db8:1:2::1", 48), net("2001:db8:1:ffff::1", 48));
        assert_ne!(net("2001:db8:1:2::1", 128), net("2001:db8:1:2::2", 128));
        assert_eq!(net("192.0.2.7", 64), "192.0.2.7");
        assert_ne!(net("192.0.2.7", 64), net("192.0.2.8", 64));
        assert_eq!(net("::ffff:192.0.2.7", 64), "192.0.2.7");
    }
}
