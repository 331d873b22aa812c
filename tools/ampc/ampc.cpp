//===- ampc.cpp - The ampc command line -----------------------------------===//
#include "compiler/cli/Command.h"

int main(int argc, char **argv) { return ampc::cli::runMain(argc, argv); }
