#include "gateway/calls/counters.hpp"

namespace sluice::gateway {

OutcomeCounters& OutcomeCounters::operator+=(const OutcomeCounters& other) {
  for (const CounterInfo& c : kCallCounters) this->*c.member += other.*c.member;
  return *this;
}

void OutcomeCounters::add_to(boost::json::object& row) const {
  for (const CounterInfo& c : kCallCounters) row[c.field] = this->*c.member;
}

}  // namespace sluice::gateway
