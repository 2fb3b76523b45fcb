#include "cli/app.h"

int main(int argc, char** argv) { return gpuenv::run_cli(argc, argv); }
