# tbench plot: mlp_train_step (f32): speedup over the reference cpu[isa=auto,threads=1] (higher is faster)
# Render it again: cd to this folder, then: gnuplot speedup-mlp_train_step-f32.gp
set encoding utf8
set title 'mlp_train_step (f32): speedup over the reference cpu[isa=auto,threads=1] (higher is faster)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set datafile missing '?'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:*]
set xtics rotate by -30 noenhanced
set xlabel 'shapes'
set ylabel 'speedup (reference median / median)'
set terminal pngcairo size 900,480 font 'sans,9' noenhanced
set output 'speedup-mlp_train_step-f32.png'
plot 'speedup-mlp_train_step-f32.dat' using 2:xtic(1) title 'blas[threads=1]', \
     1 with lines dt 2 lc 'black' title 'reference (1x)'
set output
