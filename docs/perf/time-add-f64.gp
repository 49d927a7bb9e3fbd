# tbench plot: add (f64): time per call vs size (median, 95% CI)
# Render it again: cd to this folder, then: gnuplot time-add-f64.gp
set encoding utf8
set title 'add (f64): time per call vs size (median, 95% CI)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set xlabel 'size (elements of the largest tensor)'
set logscale x
set format x '%.0s%c'
set ylabel 'time per call'
set logscale y
set format y '%.0s %cs'
set offsets graph 0.05, graph 0.05, 0, 0
set terminal pngcairo size 900,512 font 'sans,9' noenhanced
set output 'time-add-f64.png'
plot 'time-add-f64.dat' index 0 using 1:2:3:4 with yerrorlines lw 2 lc rgb '#1f77b4' dt 1 pt 7 title 'cpu[isa=auto,threads=1]'
set output
