#pragma once
// Data-parallel training: every replica computes gradients on its share of the batch, then
// optimizer_step averages them over the replicas before the update, so every replica applies
// the same update to the same weights.
#include <vector>

#include "lazytensor/autograd/grad_mode.hpp"
#include "lazytensor/distributed/collectives.hpp"
#include "lazytensor/nn/module.hpp"
#include "lazytensor/optim/optimizer.hpp"
#include "lazytensor/runtime/api.hpp"

namespace lt {

/// The mean over the replicas of every gradient of `opt`'s parameters (reduced in buckets, in
/// the step graph), then `opt.step()`. With `barrier`, also ends the step (lt::sync()).
inline void optimizer_step(optim::Optimizer& opt, bool barrier = false, Site site = Site::current()) {
  RecordingSite at(site);
  std::vector<Tensor> params, grads;
  for (const Tensor& p : opt.parameters())
    if (p.grad().defined()) {
      params.push_back(p);
      grads.push_back(p.grad());
    }
  all_reduce(ReduceOp::mean, grads);
  for (std::size_t k = 0; k < params.size(); ++k) params[k].mutable_grad() = grads[k];
  opt.step();
  if (barrier) sync();
}

/// Gives every parameter and buffer of `module` replica 0's value, so that all replicas start
/// from the same weights.
inline void broadcast_master_param(nn::Module& module, Site site = Site::current()) {
  RecordingSite at(site);
  no_grad guard;
  std::vector<Tensor> tensors = module.parameters();
  for (const Tensor& b : module.buffers()) tensors.push_back(b);
  for (Tensor& t : tensors) t.assign(broadcast(t.detach(), 0));
}

}  // namespace lt
