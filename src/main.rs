use navique_ai_core_operator::cli;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The engine grows its stack on demand; start the renderer with a roomy one.
    let child = std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(move || {
            let code = cli::main(args);
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            // Everything the command wrote is flushed and every file it made
            // is closed: tearing down the threads' heaps and the allocator
            // (mimalloc returns its pages to the kernel one madvise at a
            // time) would only spend the user's time before the exit does
            // the same at once.
            unsafe { libc::_exit(code) }
        })
        .expect("spawn renderer thread");
    // The thread exits the process itself; joining returns only after a panic.
    let _ = child.join();
    std::process::exit(2);
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
