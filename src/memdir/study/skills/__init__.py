"""The skill setting: ALFWorld task chains whose stores are built from their own trajectories."""
