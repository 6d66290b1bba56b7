#pragma once
// lazytensor data loading: datasets, DataLoader, DeviceLoader, fake data and MNIST-format
// readers (gzip included). Kept out of lazytensor.hpp: it brings threads and file I/O that
// programs without a data pipeline need not compile.
#include "lazytensor/data/data_loader.hpp"
#include "lazytensor/data/bucketing.hpp"
#include "lazytensor/data/dataset.hpp"
#include "lazytensor/data/device_loader.hpp"
#include "lazytensor/data/gzip.hpp"
#include "lazytensor/data/idx.hpp"
#include "lazytensor/data/mnist.hpp"
#include "lazytensor/data/sample_generator.hpp"
#include "lazytensor/data/transforms.hpp"
