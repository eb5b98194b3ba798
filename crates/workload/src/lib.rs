//! Workload groups: admission queues, memory pools, CPU and read-IO limits, live usage (issue 6).
//! Nothing is enforced yet; queries run in the implicit `normal` group.
