//! Plots of a run's results (plotters; PNG and SVG), drawn from [`data::PlotData`] only, so a
//! JSON export redraws them without re-simulating.

pub mod data;
