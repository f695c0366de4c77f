use navique_ai_core_operator::cli;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The engine grows its stack on demand; start the renderer with a roomy one.
    let child = std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(move || cli::main(args))
        .expect("spawn renderer thread");
    let code = child.join().unwrap_or(2);
    std::process::exit(code);
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
