// ConformanceHarness
