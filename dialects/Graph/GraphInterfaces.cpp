//===- GraphInterfaces.cpp - Op interfaces of the Graph dialect -----------===//
#include "dialects/Graph/GraphInterfaces.h"

#include "dialects/Graph/GraphInterfaces.cpp.inc"
