//! Key throughput (filled in below).
fn main() {}
