/// The seeded generator lives with the population simulation (`surge-admin simulate`); tests use it from here.
@_exported import struct SurgeSimulation.SeededRandom
