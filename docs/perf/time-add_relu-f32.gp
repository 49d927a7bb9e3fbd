# tbench plot: add_relu (f32) at 1000000,1000000: time per call (median, 95% CI)
# Render it again: cd to this folder, then: gnuplot time-add_relu-f32.gp
set encoding utf8
set title 'add_relu (f32) at 1000000,1000000: time per call (median, 95% CI)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
unset key
set style fill solid 0.6 border -1
set boxwidth 0.6
set yrange [0:*]
set format y '%.0s %cs'
set ylabel 'time per call'
set xtics rotate by -30 noenhanced
set xrange [-0.6:11.6]
set bmargin 8
set rmargin 12
set terminal pngcairo size 900,480 font 'sans,9' noenhanced
set output 'time-add_relu-f32.png'
plot 'time-add_relu-f32.dat' using 0:2:xtic(1) with boxes lc rgb '#1f77b4', \
     '' using 0:2:3:4 with yerrorbars lc 'black' pt -1
set output
