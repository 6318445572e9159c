//! xsort-io: the I/O engine.
//!
//! Large aligned transfers with O_DIRECT where the filesystem allows it and a buffered fallback where
//! it does not; read-ahead with several transfers in flight; write-behind through a buffer pool;
//! anonymous temp files spread over several directories; an output that replaces its target only
//! when complete; and cleanup on signals. Nothing here knows about records or keys.

pub mod buffer;
pub mod codec;
pub mod error;
pub mod file;
pub mod input;
pub mod mapped;
pub mod output;
pub mod private;
pub mod reader;
pub mod sigbus;
pub mod signals;
pub mod stats;
pub mod stats_file;
pub mod stdio;
pub mod temp;
pub mod writer;

pub use buffer::{align_down, align_up, AlignedBuf, Prefault, PrefaultAhead, IO_ALIGN, PREFAULT_STEP};
pub use codec::{Codec, Compression, Encoder, EncoderBlocks};
pub use error::{os_text, IoError, Result};
pub use file::{page_cache_fraction, read_stream, Access, DirectFile};
pub use input::{OpenedInput, RegularInput, StreamInput, StreamReader};
pub use mapped::MappedFile;
pub use output::AtomicOutput;
pub use reader::{read_region, Filled, ReadConfig, ReadService, ReadSource, Readers};
pub use stats::{epoch, IoCounters, IoSnapshot};
pub use temp::{FreeSpace, TempSpace};
pub use writer::{BlockWriter, BufferPool, Sink, WriterConfig};
