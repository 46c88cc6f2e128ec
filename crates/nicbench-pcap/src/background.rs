//! A file sink whose `write(2)` calls run on a background thread.
//!
//! Writing a pcap of small records is bounded by the kernel's copy into the page
//! cache (~1 GB/s on a small VM: ~13 Mpps of 76-byte records). Done on the
//! producer's thread that copy adds to the cost of making each record; here it
//! overlaps with it. Chunks (the `BufWriter`'s 1 MiB flushes) go through a
//! bounded channel (at most [`CHUNKS_IN_FLIGHT`] queued, so memory stays flat)
//! and come back for reuse, so steady state allocates nothing.
//!
//! Errors of the background writes surface at the next `write` or at `flush`;
//! `flush` waits until every chunk handed over so far is in the file.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Chunks queued for the writer thread before `write` blocks.
pub const CHUNKS_IN_FLIGHT: usize = 2;

enum Job {
    Chunk(Vec<u8>),
    /// Reply once everything before it is written.
    Barrier(SyncSender<()>),
}

/// A `File` written by a background thread. Dropping it waits for pending writes.
pub struct BackgroundFile {
    jobs: Option<SyncSender<Job>>,
    recycled: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl std::fmt::Debug for BackgroundFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundFile").finish_non_exhaustive()
    }
}

impl BackgroundFile {
    pub fn new(mut file: File) -> BackgroundFile {
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(CHUNKS_IN_FLIGHT);
        let (recycle_tx, recycled) = mpsc::sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT + 1);
        let thread = std::thread::Builder::new()
            .name("pcap-writer".into())
            .spawn(move || -> io::Result<()> {
                for job in job_rx {
                    match job {
                        Job::Chunk(chunk) => {
                            file.write_all(&chunk)?;
                            // Full or gone: the producer allocates instead, which is fine.
                            let _ = recycle_tx.try_send(chunk);
                        }
                        Job::Barrier(done) => {
                            let _ = done.send(());
                        }
                    }
                }
                file.flush()
            })
            .expect("spawning the pcap writer thread");
        BackgroundFile {
            jobs: Some(jobs),
            recycled,
            thread: Some(thread),
        }
    }

    /// The writer thread has stopped (it only stops early on an I/O error): its error.
    fn thread_error(&mut self) -> io::Error {
        self.jobs = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(err))) => err,
            Some(Err(_)) => io::Error::other("pcap writer thread panicked"),
            _ => io::Error::other("pcap writer thread stopped"),
        }
    }

    fn send(&mut self, job: Job) -> io::Result<()> {
        let Some(jobs) = &self.jobs else {
            return Err(io::Error::other("pcap writer already failed"));
        };
        if jobs.send(job).is_err() {
            return Err(self.thread_error());
        }
        Ok(())
    }
}

impl Write for BackgroundFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut chunk = self.recycled.try_recv().unwrap_or_default();
        chunk.clear();
        chunk.extend_from_slice(buf);
        self.send(Job::Chunk(chunk))?;
        Ok(buf.len())
    }

    /// Waits until everything written so far is in the file; reports write errors.
    fn flush(&mut self) -> io::Result<()> {
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        self.send(Job::Barrier(done_tx))?;
        if done_rx.recv().is_err() {
            return Err(self.thread_error());
        }
        Ok(())
    }
}

impl Drop for BackgroundFile {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_writes_arrive_in_order_and_flush_waits() {
        let dir = std::env::temp_dir().join(format!("nicbench-bgfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.bin");
        let mut sink = BackgroundFile::new(File::create(&path).unwrap());
        let mut expected = Vec::new();
        for i in 0..200u32 {
            let chunk: Vec<u8> = (0..(i % 17 + 1) * 1000).map(|j| (i + j) as u8).collect();
            sink.write_all(&chunk).unwrap();
            expected.extend_from_slice(&chunk);
        }
        sink.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);
        drop(sink);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn test_write_error_surfaces() {
        // /dev/full accepts open but fails every write with ENOSPC.
        let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let mut sink = BackgroundFile::new(full);
        let first = sink.write_all(&[0u8; 4096]);
        let err = first
            .and_then(|()| sink.flush())
            .expect_err("a write to /dev/full fails");
        assert_eq!(err.raw_os_error(), Some(28), "{err}");
    }
}
