# tbench plot: optimizer ops measured at one size (f32): time per call (median, 95% CI)
# Render it again: cd to this folder, then: gnuplot summary-optimizer-f32.gp
set encoding utf8
set title 'optimizer ops measured at one size (f32): time per call (median, 95% CI)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set datafile missing '?'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.7 border -1
set logscale y
set format y '%.0s %cs'
set ylabel 'time per call'
set xtics rotate by -30 noenhanced
set bmargin 8
set terminal pngcairo size 900,512 font 'sans,9' noenhanced
set output 'summary-optimizer-f32.png'
plot 'summary-optimizer-f32.dat' using 2:3:4:xtic(1) lc rgb '#1f77b4' title 'cpu[isa=scalar,threads=1]', \
     'summary-optimizer-f32.dat' using 5:6:7 lc rgb '#d62728' title 'cpu[isa=scalar,threads=2]', \
     'summary-optimizer-f32.dat' using 8:9:10 lc rgb '#2ca02c' title 'cpu[isa=auto,threads=1]', \
     'summary-optimizer-f32.dat' using 11:12:13 lc rgb '#9467bd' title 'cpu[isa=auto,threads=2]'
set output
