#pragma once
// The sluice command line: `sluice [serve]`, `sluice call`, `sluice servers`, `sluice demo`,
// `sluice --version`. Returns the process exit code; main() only calls this.
namespace sluice::cli {

int run(int argc, char** argv);

}  // namespace sluice::cli
