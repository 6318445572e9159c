//! Sorts a file through the library's push/pull API: reads the input in chunks and pushes them,
//! then pulls the sorted records in chunks and writes them out. `bench/library.sh` times it
//! against the `xsort` command on the same data.
//!
//! ```text
//! cargo run --release -p xsort-core --example push_pull -- \
//!     --record-size 100 --key-bytes 0:10 [--memory BYTES] [--temp DIR] [--chunk BYTES] INPUT OUTPUT
//! ```
//!
//! Prints one line of JSON: the seconds spent pushing (input read and released), pulling (output
//! taken and written), in all, and the sort's run count.

use std::io::{Read, Write};
use std::time::Instant;
use xsort_core::Sort;

fn main() {
    if let Err(e) = run() {
        eprintln!("push_pull: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut record_size, mut keys, mut memory, mut temp, mut chunk) = (100usize, Vec::new(), None, None, 1usize << 20);
    let mut paths = Vec::new();
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--record-size" => record_size = value()?.parse()?,
            "--key-bytes" => keys.push(value()?),
            "--memory" => memory = Some(value()?.parse()?),
            "--temp" => temp = Some(value()?),
            "--chunk" => chunk = value()?.parse()?,
            _ => paths.push(a),
        }
    }
    let [input, output] = &paths[..] else { return Err("usage: push_pull [options] INPUT OUTPUT".into()) };
    let mut sort = Sort::records(record_size);
    for k in &keys {
        sort = sort.key_bytes(k)?;
    }
    if let Some(m) = memory {
        sort = sort.memory(m);
    }
    if let Some(t) = temp {
        sort = sort.temp_dir(t);
    }
    let started = Instant::now();
    let mut sorting = sort.start()?;
    let mut buf = vec![0u8; chunk];
    let mut file = std::fs::File::open(input)?;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sorting.push(&buf[..n])?;
    }
    sorting.finish()?;
    let pushed = started.elapsed().as_secs_f64();
    let mut out = std::fs::File::create(output)?;
    loop {
        let n = sorting.pull(&mut buf)?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])?;
    }
    out.flush()?;
    let total = started.elapsed().as_secs_f64();
    let runs = sorting.stats().map_or(0, |s| s.runs);
    println!("{{\"push_s\": {pushed:.3}, \"pull_s\": {:.3}, \"total_s\": {total:.3}, \"runs\": {runs}}}", total - pushed);
    Ok(())
}
