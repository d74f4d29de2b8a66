//! The authentication path of one request, measured with criterion: what a request pays to learn
//! which connection (and grant) its bearer key names.
//!
//! - `key digest`: SHA-256 of the presented key (every request pays it; the cache is keyed by it).
//! - `access epoch read`: the `pread` that tells whether anything cached is still current.
//! - `cached key check`: digest, epoch and cache lookup, the path of every request after the first.
//! - `database key check`: the query a request paid before the cache, and still pays after any
//!   access change (one query through sqlx's worker thread, with the grant and its facets).
//!
//! Run with `cargo bench --bench auth`; figures are in docs/performance.md.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use journal::auth::cache::CredentialCache;
use journal::auth::{Category, connections, keys};

fn authentication(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let journal = runtime
        .block_on(journal::journal::Journal::open(dir.path()))
        .expect("a new journal");
    let pool = journal.db.clone();
    let key = runtime.block_on(async {
        let (connection, key) = connections::create_key(&pool, "bench").await.expect("a key");
        let all = Category::ALL.into_iter().collect();
        connections::set_grant(&pool, &connection.id, &all, None, journal::auth::WriteMode::None)
            .await
            .expect("a grant");
        key
    });
    let cache = CredentialCache::new(&pool);
    let epoch = cache.epoch();
    let connection = runtime
        .block_on(connections::authenticate_key(&pool, &key))
        .expect("the database answers")
        .expect("the key is valid");
    let digest = keys::digest(&key);
    cache.put("local", &digest, epoch, &std::sync::Arc::new(connection), None);

    c.bench_function("key digest", |b| b.iter(|| keys::digest(black_box(&key))));
    c.bench_function("access epoch read", |b| b.iter(|| cache.epoch()));
    c.bench_function("cached key check", |b| {
        b.iter(|| {
            let digest = keys::digest(black_box(&key));
            let hit = cache.get("local", &digest, cache.epoch(), 0);
            assert!(hit.is_some(), "the key stays cached");
            hit
        })
    });
    c.bench_function("database key check", |b| {
        b.to_async(&runtime).iter(|| async {
            let found = connections::authenticate_key(&pool, black_box(&key)).await;
            assert!(matches!(found, Ok(Some(_))), "the key is found");
            found
        })
    });
}

criterion_group!(benches, authentication);
criterion_main!(benches);
